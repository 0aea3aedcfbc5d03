"""Make the redaction corpus: fake secrets in real-world shapes, and everyday commands.

    python tests/vectors/redaction/make_redaction_corpus.py

writes ``secret-shapes.json`` and ``everyday.json`` beside this file. Every secret is
random (a fixed seed, so the output is reproducible and a test checks it is): it has the
*shape* of a real credential of its family (prefix, alphabet, length, structure, as the
issuers document them and as the detectors expect) and is no one's credential. Each shape
is placed in a few command lines of the kinds an agent runs: an argument, an environment
assignment under a name that does not say "secret", a header, a URL, a config line.

``everyday.json`` is the policy corpus's everyday and destructive commands
(``tests/guard/policy/corpus.py``, ``SAFE`` and ``DESTRUCTIVE``) plus ``EXTRA`` below:
commands full of hashes, ids, ports, paths and options that look like secrets and are not.
"""

from __future__ import annotations

import base64
import json
import random
import string
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
SEED = 13
PER_FAMILY = 4

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = UPPER + LOWER + DIGITS
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


def pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def jwt(rng: random.Random) -> str:
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = {"sub": pick(rng, DIGITS, 8), "name": pick(rng, LOWER, 6), "iat": 1700000000}
    return f"{header}.{b64url(json.dumps(claims).encode())}.{pick(rng, URLSAFE, 43)}"


def pem(rng: random.Random, kind: str) -> str:
    body = "\n".join(pick(rng, B64, 64) for _ in range(3))
    return f"-----BEGIN {kind}-----\n{body}\n-----END {kind}-----"


# family -> (make a secret, contexts); "{s}" is the secret. Contexts deliberately avoid
# naming the secret ("TOKEN=", "--password") where the family has a recognisable shape.
Maker = Callable[[random.Random], str]
NEUTRAL = (
    "./deploy.sh {s}",
    "export CI_VALUE={s} && make release",
    "echo '{s}' | pbcopy",
)
FAMILIES: dict[str, tuple[Maker, tuple[str, ...]]] = {
    "aws-access-key-id": (
        lambda r: r.choice(["AKIA", "ASIA"]) + pick(r, UPPER + DIGITS, 16),
        NEUTRAL,
    ),
    "aws-secret-access-key": (
        lambda r: pick(r, B64, 40),
        (
            "export AWS_SECRET_ACCESS_KEY={s}",
            "printf 'aws_secret_access_key = {s}\n' >> ~/.aws/credentials",
            "aws configure set aws_secret_access_key {s}",
        ),
    ),
    "stripe-secret-key": (lambda r: "sk_live_" + pick(r, ALNUM, r.choice([24, 99])), NEUTRAL),
    "stripe-restricted-key": (lambda r: "rk_live_" + pick(r, ALNUM, 24), NEUTRAL),
    "github-classic-token": (
        lambda r: r.choice(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]) + pick(r, ALNUM, 36),
        (*NEUTRAL, "git clone https://{s}@github.com/acme/app.git"),
    ),
    "github-fine-grained-pat": (
        lambda r: "github_pat_" + pick(r, ALNUM, 22) + "_" + pick(r, ALNUM, 59),
        NEUTRAL,
    ),
    "gitlab-pat": (lambda r: "glpat-" + pick(r, URLSAFE, 20), NEUTRAL),
    "slack-token": (
        lambda r: (
            r.choice(["xoxb-", "xoxp-"])
            + pick(r, DIGITS, 11)
            + "-"
            + pick(r, DIGITS, 12)
            + "-"
            + pick(r, ALNUM, 24)
        ),
        NEUTRAL,
    ),
    "slack-webhook": (
        lambda r: (
            "https://hooks.slack.com/services/T"
            + pick(r, UPPER + DIGITS, 8)
            + "/B"
            + pick(r, UPPER + DIGITS, 10)
            + "/"
            + pick(r, ALNUM, 24)
        ),
        ("curl -X POST -d @msg.json {s}", "echo {s} > hook.txt"),
    ),
    "jwt": (jwt, (*NEUTRAL, 'curl -H "X-Session: {s}" https://api.example.com/me')),
    "bearer-opaque": (
        lambda r: pick(r, URLSAFE, 40),
        ('curl -H "Authorization: Bearer {s}" https://api.example.com',),
    ),
    "sendgrid": (lambda r: "SG." + pick(r, URLSAFE, 22) + "." + pick(r, URLSAFE, 43), NEUTRAL),
    "twilio-api-key": (lambda r: "SK" + pick(r, HEX, 32), NEUTRAL),
    "twilio-account-sid": (lambda r: "AC" + pick(r, HEX, 32), NEUTRAL),
    "mailchimp": (lambda r: pick(r, HEX, 32) + "-us" + str(r.randint(1, 20)), NEUTRAL),
    "discord-bot-token": (
        lambda r: (
            r.choice("MNO")
            + pick(r, URLSAFE, 23)
            + "."
            + pick(r, URLSAFE, 6)
            + "."
            + pick(r, URLSAFE, 27)
        ),
        NEUTRAL,
    ),
    "telegram-bot-token": (
        lambda r: pick(r, DIGITS, 10) + ":" + pick(r, URLSAFE, 35),
        NEUTRAL,
    ),
    "npm-token": (
        lambda r: "npm_" + pick(r, ALNUM, 36),
        (*NEUTRAL, "npm config set //registry.npmjs.org/:_authToken {s}"),
    ),
    "pypi-token": (
        lambda r: "pypi-AgEIcHlwaS5vcmc" + pick(r, URLSAFE, 120),
        (*NEUTRAL, "twine upload -u __token__ -p {s} dist/*"),
    ),
    "openai-project-key": (lambda r: "sk-proj-" + pick(r, URLSAFE, 120), NEUTRAL),
    "openai-legacy-key": (
        lambda r: "sk-" + pick(r, ALNUM, 20) + "T3BlbkFJ" + pick(r, ALNUM, 20),
        NEUTRAL,
    ),
    "anthropic-key": (lambda r: "sk-ant-api03-" + pick(r, URLSAFE, 93) + "AA", NEUTRAL),
    "google-api-key": (lambda r: "AIza" + pick(r, URLSAFE, 35), NEUTRAL),
    "huggingface-token": (lambda r: "hf_" + pick(r, ALNUM, 34), NEUTRAL),
    "square-oauth-secret": (lambda r: "sq0csp-" + pick(r, URLSAFE, 43), NEUTRAL),
    "azure-storage-key": (
        lambda r: pick(r, B64, 86) + "==",
        (
            "az storage blob list --connection-string "
            "'DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={s};EndpointSuffix=core.windows.net'",
        ),
    ),
    "artifactory-token": (lambda r: "AKCp8" + pick(r, ALNUM, 68), NEUTRAL),
    "private-key": (
        lambda r: pem(r, r.choice(["RSA PRIVATE KEY", "OPENSSH PRIVATE KEY", "EC PRIVATE KEY"])),
        ("printf '{s}' > id_deploy", "echo '{s}' | ssh-add -"),
    ),
    "url-credentials": (
        lambda r: pick(r, ALNUM, 14) + "!" + pick(r, DIGITS, 3),
        (
            "git clone https://deploy:{s}@git.example.com/app.git",
            "psql postgres://app:{s}@db.internal:5432/app",
            "pip install -i https://ci:{s}@pypi.example.com/simple pkg",
        ),
    ),
    "password-option": (
        lambda r: pick(r, ALNUM, 12) + r.choice("#%^*") + pick(r, DIGITS, 2),
        (
            "mysql -u root -p{s} prod",
            "sshpass -p '{s}' ssh deploy@10.0.0.5",
            "curl -u admin:{s} https://ci.example.com/api",
            "mysqldump --password={s} app > dump.sql",
            "redis-cli -a {s} FLUSHALL",
            "docker login -u bot -p {s} registry.example.com",
        ),
    ),
    "keyword-assignment": (
        lambda r: pick(r, ALNUM, 16),
        (
            "DB_PASSWORD={s} ./manage.py migrate",
            "export API_KEY=$'{s}'",
            "echo 'client_secret: {s}' >> config.yml",
            "kubectl create secret generic app --from-literal=password={s}",
            'echo \'{{"api_key": "{s}"}}\' > creds.json',
        ),
    ),
}

EXTRA = (
    "git log --oneline -20",
    "git show 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39",
    "git checkout -b feature/auth-refactor",
    "git rebase -i HEAD~3",
    "git diff --stat origin/main...HEAD",
    "git cherry-pick 9e1b2c3d4e5f",
    "git commit -m 'Fix password reset email template'",
    "git log --author=alice --since=2.weeks",
    "docker run -p 8080:80 -e NODE_ENV=production nginx:1.25",
    "docker build -t registry.example.com/app:sha-4f9c2e1 .",
    "docker pull python@sha256:5c2fe36a1d6fbd0fb4a0b6f44d7a2c0a0c1a0b1e2f3a4b5c6d7e8f9a0b1c2d3e",
    "kubectl get pods -n kube-system -o wide",
    "kubectl logs deploy/api --since=1h | grep -i token",
    "kubectl rollout restart deployment/web",
    "ssh -p 2222 deploy@203.0.113.7 uptime",
    "scp -P 2222 build.tgz deploy@host:/srv/releases/",
    "rsync -avz --delete dist/ web:/var/www/",
    "curl -s https://api.github.com/repos/python/cpython/commits?per_page=1",
    "curl -fsSL https://example.com/install.sh -o install.sh",
    "curl -X POST -H 'Content-Type: application/json' -d '{\"id\": 42}' http://localhost:8000/items",
    "wget -q https://files.example.com/data-2024-01-01.csv",
    "sha256sum dist/app-1.2.3.tar.gz",
    "echo e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 dist/x | sha256sum -c",
    "md5sum *.iso",
    "uuidgen",
    "psql -h localhost -U postgres -d app -c 'select count(*) from users'",
    "mysql -u root -p app < schema.sql",
    "pip install 'requests>=2.31' pydantic==2.7.1",
    "pip hash dist/pkg-1.0-py3-none-any.whl",
    "npm install --save-dev typescript@5.4.5",
    "npm run build -- --mode production",
    "pytest -q -k 'not slow' --maxfail=1",
    "python -m pytest tests/test_tokenizer.py::test_secret_keyword",
    "ruff check --fix src",
    "mypy --strict src",
    "ls -la ~/.ssh",
    "find . -name '*.pyc' -delete",
    "grep -rn 'api_key' src/ --include=*.py",
    "grep -rn password docs/",
    "sed -i 's/localhost:5432/db:5432/' config/database.yml",
    "tar czf backup-20240101.tgz /srv/data",
    "openssl x509 -in cert.pem -noout -fingerprint -sha256",
    "openssl rand -hex 32 > .session-seed",
    "ssh-keygen -t ed25519 -C ci@example.com -f ~/.ssh/id_ci -N ''",
    "gpg --list-secret-keys --keyid-format=long",
    "aws s3 ls s3://acme-builds/releases/ --region eu-west-1",
    "aws sts get-caller-identity",
    "gcloud compute instances list --project acme-prod-314159",
    "terraform plan -out=tfplan -var-file=prod.tfvars",
    "az group list --query '[].name' -o tsv",
    "helm upgrade --install web ./chart -f values.yaml --set image.tag=4f9c2e1",
    "jq '.items[] | {name: .metadata.name}' pods.json",
    "base64 -d <<< aGVsbG8gd29ybGQ=",
    "echo $HOME $PATH",
    "export NODE_OPTIONS=--max-old-space-size=4096",
    "export PAGER=less",
    "env | sort",
    "cat .env.example",
    "make -j8 test",
    "cargo build --release --target x86_64-unknown-linux-gnu",
    "go test ./... -run TestAuthMiddleware -count=1",
    "go get github.com/aws/aws-sdk-go-v2@v1.24.0",
    "node -e 'console.log(process.version)'",
    "python -c 'import secrets; print(secrets.token_hex(4))'",
    "systemctl status nginx --no-pager",
    "journalctl -u api --since '2024-01-01 10:00'",
    "crontab -l",
    "chmod 600 ~/.ssh/id_ed25519",
    "ps aux | grep -v grep | grep gunicorn",
    "lsof -i :5432",
    "netstat -tlnp",
    "du -sh node_modules",
    "zip -r release.zip dist",
    "unzip -o release.zip -d /tmp/release",
    "7z x archive.7z -o./out",
    "redis-cli -h cache.internal ping",
    "ldapsearch -x -b dc=example,dc=com '(uid=alice)'",
    "sqlite3 app.db '.tables'",
    "gh pr create --title 'Rotate session keys' --body 'See the runbook'",
    "gh run view 7712345678 --log-failed",
    "echo 'Bearer' tokens are documented in docs/auth.md",
    "vim src/auth/token_store.py",
    "code --diff a.txt b.txt",
    "git remote add upstream https://github.com/acme/app.git",
    "git push origin HEAD:refs/heads/release/2024.01",
    "git tag -a v1.2.3 -m 'Release 1.2.3'",
    "curl https://example.com/a?id=17&page=2",
    "ping -c 3 8.8.8.8",
    "dig +short example.com TXT",
    "python manage.py createsuperuser --username admin --email admin@example.com",
    "rails db:migrate RAILS_ENV=production",
    "bundle exec rspec spec/models/user_spec.rb:42",
    "dotnet test --filter Category=Unit",
    "mvn -DskipTests package",
    "./gradlew assembleRelease --stacktrace",
    "kubectl create secret generic app --from-file=./secrets/",
    "docker compose up -d --build",
)


def secret_shapes() -> list[dict[str, str]]:
    rng = random.Random(SEED)
    out: list[dict[str, str]] = []
    for family, (make, contexts) in FAMILIES.items():
        for i in range(PER_FAMILY):
            for context in contexts:
                secret = make(rng)
                if family == "private-key":
                    command = context.replace("{s}", secret)
                    secret = secret.split("\n")[1]  # a line of the body must not survive
                else:
                    command = context.replace("{s}", secret)
                out.append(
                    {"family": family, "sample": str(i), "command": command, "secret": secret}
                )
    return out


def everyday() -> list[str]:
    sys.path.insert(0, str(ROOT))
    from tests.guard.policy.corpus import DESTRUCTIVE, SAFE

    seen: dict[str, None] = {}
    for command in (*SAFE, *DESTRUCTIVE, *EXTRA):
        seen.setdefault(command, None)
    return list(seen)


def main() -> None:
    (HERE / "secret-shapes.json").write_text(
        json.dumps(secret_shapes(), indent=1, ensure_ascii=True) + "\n", encoding="utf-8"
    )
    (HERE / "everyday.json").write_text(
        json.dumps(everyday(), indent=1, ensure_ascii=True) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    main()
