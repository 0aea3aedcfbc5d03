// The approval page: every pending question of the guard home, answered Yes or No.
// Text is written only through textContent; the server sets a strict CSP (no inline script).
// With a passkey enrolled for this page's origin, Yes is signed by it: the sidecar gives the
// approval statement's challenge, the authenticator signs it (user verification required),
// and the assertion goes with the answer; the sidecar checks it.
"use strict";
let csrf = "";
let operator = null; // {rpId, credentials} from /api/pending, or null: Yes is not signed
let elsewhere = []; // the origins passkeys are enrolled for when none is for this page's
let port = ""; // this page's port
const shown = new Map(); // approval id -> its <li>
const KEEP_ANSWERED_MS = 3000; // an answer given here stays on screen this long, with its outcome

const b64url = (buffer) =>
	btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const bytes = (text) => Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));

async function post(path, body) {
	const reply = await fetch(path, {
		method: "POST",
		headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
		body: JSON.stringify(body),
	});
	return reply.json();
}

function buttons(node, enabled) {
	for (const button of node.querySelectorAll("button")) button.disabled = !enabled;
}

// The passkey's assertion over the question's approval statement, or null (said on the page).
async function signed(item, node) {
	const say = node.querySelector(".outcome");
	const asked = await post("/api/statement", { sidecar: item.sidecar, id: item.id, digest: item.digest });
	if (asked.outcome !== "ready") {
		say.textContent = `not accepted: ${asked.outcome || asked.error}`;
		return null;
	}
	say.textContent = `touch your passkey to sign ${asked.evidenceId}…`;
	let credential;
	try {
		credential = await navigator.credentials.get({
			publicKey: {
				challenge: bytes(asked.challenge),
				rpId: asked.rpId,
				allowCredentials: asked.allowCredentials.map((id) => ({ type: "public-key", id: bytes(id) })),
				userVerification: "required",
				timeout: asked.timeoutMs,
			},
		});
	} catch (err) {
		say.textContent = `passkey refused or failed (${err.name}): nothing was answered; Yes to try again, or No`;
		return null;
	}
	if (!credential) {
		say.textContent = "passkey gave nothing: nothing was answered; Yes to try again, or No";
		return null;
	}
	const response = credential.response;
	return {
		evidenceId: asked.evidenceId,
		operatorSignature: {
			credentialId: b64url(credential.rawId),
			authenticatorData: b64url(response.authenticatorData),
			clientDataJson: b64url(response.clientDataJSON),
			signature: b64url(response.signature),
		},
	};
}

async function answer(item, decision, node, grant) {
	const say = node.querySelector(".outcome");
	const body = { sidecar: item.sidecar, id: item.id, digest: item.digest, decision };
	if (grant !== undefined) body.grant = grant;
	const reason = node.querySelector(".reason").value.trim();
	if (decision === "no" && reason) body.reason = reason;
	buttons(node, false);
	node.dataset.answering = "yes"; // a refresh must not take it away before its outcome shows
	try {
		// A call's Yes is signed; held effects have no statement to sign (their evidence is the
		// effects review's), so their Yes goes as it did before passkeys.
		if (decision === "yes" && operator && item.kind === "call") {
			const signature = await signed(item, node);
			if (!signature) {
				buttons(node, true);
				return;
			}
			Object.assign(body, signature);
		}
		const said = await post("/api/answer", body);
		say.textContent = said.outcome === "accepted" ? `answered: ${decision}` : `not accepted: ${said.outcome || said.error}`;
		// The operator's signature refused: the question is still open, Yes can be tried again.
		if (typeof said.outcome === "string" && said.outcome.startsWith("operator-")) buttons(node, true);
	} catch (err) {
		say.textContent = `the guard does not answer (${err}): nothing was answered`;
		buttons(node, true);
	} finally {
		node.dataset.answeredAt = String(Date.now());
	}
}

// A question that left the pending list goes, unless this page is answering it or answered it
// a moment ago: then its outcome stays readable for KEEP_ANSWERED_MS.
function keep(node) {
	if (node.dataset.answering !== "yes") return false;
	const at = Number(node.dataset.answeredAt || 0);
	return at === 0 || Date.now() - at < KEEP_ANSWERED_MS;
}

// Seconds left to answer, and until when in the browser's local time (as the grant buttons).
function left(node) {
	const deadline = Number(node.dataset.deadline || 0);
	if (!deadline || node.dataset.answering === "yes") return;
	const seconds = Math.max(0, Math.round((deadline - Date.now()) / 1000));
	const until = new Date(deadline).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
	node.querySelector(".left").textContent = seconds ? `${seconds} s left (until ${until}); no answer counts as No` : "time is up: no answer counts as No";
}

function render(pending) {
	const list = document.getElementById("pending");
	const now = new Set(pending.map((p) => p.id));
	for (const [id, node] of shown) {
		if (now.has(id) || keep(node)) continue;
		// Answered elsewhere, withdrawn or late: the question leaves the page.
		node.remove();
		shown.delete(id);
	}
	for (const item of pending) {
		if (shown.has(item.id)) continue;
		const node = document.getElementById("question").content.firstElementChild.cloneNode(true);
		node.dataset.id = item.id;
		node.querySelector(".text").textContent = `${item.title}\n${item.message}`;
		node.querySelector(".details").textContent = item.details;
		node.querySelector(".whose").textContent = `pi session ${item.sessionId || "(not known yet)"} · folder ${item.cwd || "(not known)"}`;
		node.querySelector(".digest").textContent = `${item.id} · ${item.digest}`;
		node.dataset.deadline = String(Date.parse(item.deadlineIso));
		node.querySelector(".yes").addEventListener("click", () => answer(item, "yes", node));
		node.querySelector(".no").addEventListener("click", () => answer(item, "no", node));
		(item.grants || []).forEach((line, index) => {
			const button = document.createElement("button");
			button.type = "button";
			button.className = "grant";
			button.textContent = line; // the grant's whole scope, as pi's dialog spells it
			button.addEventListener("click", () => answer(item, "yes", node, index));
			node.querySelector(".grants").append(button);
		});
		list.append(node);
		shown.set(item.id, node);
	}
	for (const node of shown.values()) left(node);
	document.getElementById("state").textContent = pending.length ? `${pending.length} pending` : "nothing pending";
	document.getElementById("operator").textContent = operator
		? `Yes is signed with your passkey (${operator.credentials.length} enrolled for this page)`
		: elsewhere.length
			? `Yes is not signed with a passkey: a passkey is enrolled for ${elsewhere.join(", ")}; this page is on ${port} (a passkey signs for its own address only: open the page there, or pi-guard operator enroll --port ${port})`
			: "Yes is not signed with a passkey (none enrolled for this page: pi-guard operator enroll)";
}

async function refresh() {
	try {
		const reply = await fetch("/api/pending", { cache: "no-store" });
		if (reply.status === 401) {
			document.getElementById("state").textContent =
				"not logged in: open a one-time login link: /guard in pi prints one (or the terminal of pi-guard approvals serve)";
			return;
		}
		const data = await reply.json();
		csrf = data.csrf;
		operator = data.operator || null;
		elsewhere = data.enrolledElsewhere || [];
		port = String(data.port || "");
		render(data.pending);
	} catch (err) {
		document.getElementById("state").textContent = `the guard does not answer (${err})`;
	}
	setTimeout(refresh, 500);
}
refresh();
