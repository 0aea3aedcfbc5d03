// The enrolment page of `pi-guard operator enroll`: one passkey ceremony per login.
// Text is written only through textContent; the server sets a strict CSP (no inline script).
"use strict";
let csrf = "";

const b64url = (buffer) =>
	btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const bytes = (text) => Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
const state = (text) => {
	document.getElementById("state").textContent = text;
};

// Fresh creation options (a new challenge, single use), or null (said on the page).
async function options() {
	const reply = await fetch("/api/enrol", { cache: "no-store" });
	if (reply.status === 401) {
		state("not logged in: open the login address the guard printed");
		return null;
	}
	const data = await reply.json();
	if (!reply.ok) {
		state(`cannot enrol here: ${data.error} (run pi-guard operator enroll again)`);
		return null;
	}
	csrf = data.csrf;
	document.getElementById("label").textContent = data.label;
	document.getElementById("origin").textContent = data.origin;
	return data.options;
}

async function enrol() {
	const button = document.getElementById("enrol");
	button.disabled = true;
	const given = await options();
	if (!given) return;
	const publicKey = {
		...given,
		challenge: bytes(given.challenge),
		user: { ...given.user, id: bytes(given.user.id) },
		excludeCredentials: given.excludeCredentials.map((c) => ({ ...c, id: bytes(c.id) })),
	};
	let credential;
	try {
		credential = await navigator.credentials.create({ publicKey });
	} catch (err) {
		state(`passkey refused or failed (${err.name}): nothing was enrolled; try again`);
		button.disabled = false;
		return;
	}
	if (!credential) {
		state("passkey gave nothing: nothing was enrolled; try again");
		button.disabled = false;
		return;
	}
	const reply = await fetch("/api/enrol", {
		method: "POST",
		headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
		body: JSON.stringify({
			id: credential.id,
			rawId: b64url(credential.rawId),
			type: credential.type,
			response: {
				clientDataJSON: b64url(credential.response.clientDataJSON),
				attestationObject: b64url(credential.response.attestationObject),
			},
		}),
	});
	const said = await reply.json();
	if (said.outcome === "enrolled") state(`enrolled: ${said.label} (${said.credentialId}); you can close this page`);
	else state(`not enrolled: ${said.reason || said.error}`);
}

async function start() {
	try {
		if (!(await options())) return;
	} catch (err) {
		state(`the guard does not answer (${err})`);
		return;
	}
	state("ready: press the button, then your passkey");
	const button = document.getElementById("enrol");
	button.addEventListener("click", enrol);
	button.disabled = false;
}
start();
