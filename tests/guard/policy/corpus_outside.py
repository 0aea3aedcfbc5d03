"""The corpus of places outside the sandbox: code that later runs with the user's rights, and
credentials. Written from where each tool really looks (the source named beside each group),
not copied from the built-in rules, so a rule that loses a path fails a test.

``~`` is the user's home; ``$CONFIG`` is ``~/.config`` and ``$DATA`` is ``~/.local/share``
(the XDG Base Directory defaults). Each entry is a path a file tool could write; the tests
also write a file *inside* the directories.
"""

from __future__ import annotations

# (path, source)
RUNS_CODE: tuple[tuple[str, str], ...] = (
    # bash(1) INVOCATION; Debian /etc/skel/.bashrc sources ~/.bash_aliases; Fedora ~/.bashrc.d
    ("~/.bashrc", "bash(1) INVOCATION"),
    ("~/.bash_profile", "bash(1) INVOCATION"),
    ("~/.bash_login", "bash(1) INVOCATION"),
    ("~/.profile", "bash(1) INVOCATION, dash(1)"),
    ("~/.bash_logout", "bash(1) INVOCATION"),
    ("~/.bash_aliases", "Debian /etc/skel/.bashrc"),
    ("~/.bashrc.d/10-evil.sh", "Fedora /etc/skel/.bashrc"),
    # zsh(1) STARTUP/SHUTDOWN FILES
    ("~/.zshenv", "zsh(1) STARTUP/SHUTDOWN FILES"),
    ("~/.zprofile", "zsh(1) STARTUP/SHUTDOWN FILES"),
    ("~/.zshrc", "zsh(1) STARTUP/SHUTDOWN FILES"),
    ("~/.zlogin", "zsh(1) STARTUP/SHUTDOWN FILES"),
    ("~/.oh-my-zsh/custom/evil.zsh", "oh-my-zsh: custom/*.zsh is sourced"),
    # fish(1) CONFIGURATION FILES, ksh(1), tcsh(1), readline(3), nushell, PowerShell
    ("$CONFIG/fish/config.fish", "fish(1)"),
    ("$CONFIG/fish/conf.d/evil.fish", "fish(1)"),
    ("~/.kshrc", "ksh(1) ENV"),
    ("~/.cshrc", "tcsh(1) STARTUP AND SHUTDOWN"),
    ("~/.tcshrc", "tcsh(1) STARTUP AND SHUTDOWN"),
    ("~/.inputrc", "readline(3) INITIALIZATION FILE (macros type into the shell)"),
    ("$CONFIG/nushell/config.nu", "nushell configuration"),
    ("$CONFIG/powershell/Microsoft.PowerShell_profile.ps1", "about_Profiles"),
    # log-in environment: pam_env(8), environment.d(5), sshd(8) ~/.ssh/rc, X sessions
    ("~/.pam_environment", "pam_env(8)"),
    ("$CONFIG/environment.d/50-evil.conf", "environment.d(5)"),
    ("~/.ssh/rc", "sshd(8) FILES"),
    ("~/.xsessionrc", "Debian Xsession(5)"),
    ("~/.xprofile", "display managers"),
    # terminal multiplexers and debuggers run commands from their config
    ("~/.tmux.conf", "tmux(1) run-shell"),
    ("~/.gdbinit", "gdb(1) ~/.gdbinit"),
    ("$CONFIG/starship.toml", "starship custom modules"),
    # git-config(1) FILES, gitattributes(5), githooks(5)
    ("~/.gitconfig", "git-config(1) FILES"),
    ("$CONFIG/git/config", "git-config(1) FILES"),
    ("$CONFIG/git/attributes", "gitattributes(5) (filter drivers)"),
    ("/etc/gitconfig", "git-config(1) FILES"),
    # programs found on PATH: Debian ~/.profile puts these first once they exist
    ("~/.local/bin/git", "Debian /etc/skel/.profile, file-hierarchy(7)"),
    ("~/bin/ls", "Debian /etc/skel/.profile"),
    ("/usr/local/bin/git", "PATH"),
    ("/usr/bin/python3", "PATH"),
    # pi: the agent directory (settings, trust, models, extensions, packages, skills)
    ("~/.pi/agent/settings.json", "pi docs/settings.md"),
    ("~/.pi/agent/trust.json", "pi docs/security.md (saved trust decisions)"),
    ("~/.pi/agent/models.json", "pi docs/models.md"),
    ("~/.pi/agent/extensions/evil.ts", "pi docs/extensions.md (always loaded)"),
    ("~/.pi/agent/skills/evil/SKILL.md", "pi docs/skills.md"),
    ("~/.pi/agent/AGENTS.md", "pi docs (global context file)"),
    ("~/.pi/agent/npm/node_modules/x/index.js", "pi docs/packages.md (the pi npm directory)"),
    # package managers and build tools whose configuration names programs
    ("~/.npmrc", "npmrc(5): script-shell, node-options, prefix"),
    ("~/.yarnrc.yml", "yarnrc: yarnPath"),
    ("$CONFIG/pip/pip.conf", "pip configuration: index-url"),
    ("~/.cargo/config.toml", "cargo config: build.rustc-wrapper, target.runner"),
    ("$CONFIG/go/env", "go env -w: GOFLAGS=-toolexec"),
    ("~/.gradle/init.d/evil.gradle", "gradle init scripts"),
    ("~/.gradle/gradle.properties", "gradle: org.gradle.jvmargs -javaagent"),
    ("~/.m2/settings.xml", "maven settings: mirrors"),
    ("~/.docker/config.json", "docker: credsStore runs docker-credential-*"),
    ("~/.docker/cli-plugins/docker-evil", "docker CLI plugins"),
    ("~/.kube/config", "kubeconfig exec credential plugins"),
    ("~/.aws/config", "aws: credential_process"),
    ("~/.ssh/config", "ssh_config(5): ProxyCommand, LocalCommand"),
    ("~/.ssh/authorized_keys", "sshd(8) AUTHORIZED_KEYS FILE FORMAT"),
    ("~/.gnupg/gpg-agent.conf", "gpg-agent(1): pinentry-program"),
    ("$CONFIG/gh/config.yml", "gh alias set --shell"),
    # editors load code from their configuration
    ("~/.vimrc", "vim(1) initialization"),
    ("~/.vim/plugin/evil.vim", "vim(1) 'runtimepath'"),
    ("$CONFIG/nvim/init.lua", "nvim(1)"),
    ("$DATA/nvim/site/pack/x/start/evil/plugin/evil.lua", "nvim packages"),
    ("~/.emacs.d/init.el", "Emacs init file"),
    ("~/.emacs", "Emacs init file"),
    ("$CONFIG/Code/User/settings.json", "VS Code user settings"),
    ("~/.vscode/extensions/evil/extension.js", "VS Code extensions"),
    ("$CONFIG/helix/languages.toml", "helix: language server commands"),
    ("$CONFIG/zed/settings.json", "zed: language server commands"),
    # direnv(1): direnvrc and the allow list
    ("$CONFIG/direnv/direnvrc", "direnv-stdlib(1)"),
    ("$DATA/direnv/allow/0123abcd", "direnv(1): allowed .envrc files"),
    # user services, autostart, desktop entries, cron
    ("$CONFIG/systemd/user/evil.service", "systemd.unit(5) user unit search path"),
    ("$DATA/systemd/user/evil.service", "systemd.unit(5) user unit search path"),
    ("$CONFIG/autostart/evil.desktop", "XDG Autostart specification"),
    ("$DATA/applications/evil.desktop", "Desktop Entry specification (Exec=)"),
    ("/var/spool/cron/crontabs/root", "crontab(5)"),
    ("/etc/cron.d/evil", "cron(8)"),
    # Python start-up: site(3) runs .pth files of the user site
    ("~/.local/lib/python3.11/site-packages/evil.pth", "site(3)"),
    # toolchains: what PATH's shims and links lead to
    ("~/.cargo/bin/cargo", "rustup: proxies in ~/.cargo/bin"),
    ("~/.pyenv/shims/python", "pyenv: shims"),
    ("~/.nvm/versions/node/v22.0.0/bin/node", "nvm"),
    ("$DATA/pipx/venvs/black/bin/black", "pipx: ~/.local/bin links into its venvs"),
    # git files of the workspace's repositories, which the operator's git runs
    (".git/hooks/pre-commit", "githooks(5)"),
    (".git/config", "git-config(1) FILES ($GIT_DIR/config)"),
    ("vendor/lib/.git/hooks/post-checkout", "githooks(5), a nested repository"),
    (".git/modules/sub/config", "gitsubmodules(7)"),
    # the kernel
    ("/proc/sys/kernel/core_pattern", "core(5): a program run as root on every crash"),
    # the system
    ("/etc/ld.so.preload", "ld.so(8) FILES"),
    ("/etc/profile.d/evil.sh", "bash(1) INVOCATION (/etc/profile)"),
    ("/etc/bash.bashrc", "Debian bash"),
    ("/usr/lib/python3/dist-packages/evil.pth", "site(3)"),
)

# Credentials a file tool reads only after asking (path, source).
CREDENTIALS: tuple[tuple[str, str], ...] = (
    ("~/.ssh/id_ed25519", "ssh-keygen(1) FILES"),
    ("~/.ssh/id_rsa", "ssh-keygen(1) FILES"),
    ("~/.pi/agent/auth.json", "pi docs/providers.md"),
    ("~/.pi/agent/models.json", "pi docs/models.md (apiKey)"),
    ("~/.aws/credentials", "AWS CLI configuration files"),
    ("$CONFIG/gcloud/application_default_credentials.json", "gcloud auth"),
    ("~/.azure/accessTokens.json", "Azure CLI"),
    ("~/.kube/config", "kubeconfig"),
    ("~/.docker/config.json", "docker login"),
    ("~/.netrc", "netrc(5)"),
    ("~/.git-credentials", "git-credential-store(1)"),
    ("$CONFIG/git/credentials", "git-credential-store(1)"),
    ("~/.pgpass", "PostgreSQL libpq: the password file"),
    ("~/.my.cnf", "MySQL option files"),
    ("~/.pypirc", "The .pypirc file"),
    ("~/.npmrc", "npmrc(5): _authToken"),
    ("~/.cargo/credentials.toml", "cargo login"),
    ("~/.gem/credentials", "gem push"),
    ("~/.m2/settings.xml", "maven settings: servers"),
    ("~/.gradle/gradle.properties", "gradle: credentials properties"),
    ("$CONFIG/gh/hosts.yml", "gh auth login"),
    ("~/.gnupg/private-keys-v1.d/key.key", "gpg-agent(1)"),
    ("~/.password-store/site.gpg", "pass(1)"),
    ("$DATA/keyrings/login.keyring", "GNOME keyring"),
    ("~/.vault-token", "Vault token helper"),
    ("~/.terraform.d/credentials.tfrc.json", "terraform login"),
    ("$CONFIG/rclone/rclone.conf", "rclone config"),
    ("~/.mozilla/firefox/x.default/cookies.sqlite", "browser profile"),
    ("$CONFIG/chromium/Default/Cookies", "browser profile"),
    ("~/.bash_history", "bash(1) HISTFILE"),
    ("~/.zsh_history", "zsh HISTFILE"),
    ("~/.psql_history", "psql(1)"),
)


def expand(path: str, home: str) -> str:
    """``path`` with ``~``, ``$CONFIG`` and ``$DATA`` replaced for ``home``."""
    for prefix, value in (
        ("~/", home + "/"),
        ("$CONFIG/", home + "/.config/"),
        ("$DATA/", home + "/.local/share/"),
    ):
        if path.startswith(prefix):
            return value + path[len(prefix) :]
    return path
