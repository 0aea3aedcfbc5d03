// The approval page: every pending question of the guard home, answered Yes or No.
// Text is written only through textContent; the server sets a strict CSP (no inline script).
"use strict";
let csrf = "";
const shown = new Map(); // approval id -> its <li>

async function answer(item, decision, node, grant) {
	const body = { sidecar: item.sidecar, id: item.id, digest: item.digest, decision };
	if (grant !== undefined) body.grant = grant;
	const reason = node.querySelector(".reason").value.trim();
	if (decision === "no" && reason) body.reason = reason;
	const reply = await fetch("/api/answer", {
		method: "POST",
		headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
		body: JSON.stringify(body),
	});
	const said = await reply.json();
	node.querySelector(".outcome").textContent = said.outcome === "accepted" ? `answered: ${decision}` : `not accepted: ${said.outcome || said.error}`;
	for (const button of node.querySelectorAll("button")) button.disabled = true;
}

function render(pending) {
	const list = document.getElementById("pending");
	const now = new Set(pending.map((p) => p.id));
	for (const [id, node] of shown) {
		if (now.has(id)) continue;
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
		node.querySelector(".digest").textContent = `${item.id} · ${item.digest} · until ${item.deadlineIso}`;
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
	document.getElementById("state").textContent = pending.length ? `${pending.length} pending` : "nothing pending";
}

async function refresh() {
	try {
		const reply = await fetch("/api/pending", { cache: "no-store" });
		if (reply.status === 401) {
			document.getElementById("state").textContent = "not logged in: open the login address the guard printed";
			return;
		}
		const data = await reply.json();
		csrf = data.csrf;
		render(data.pending);
	} catch (err) {
		document.getElementById("state").textContent = `the guard does not answer (${err})`;
	}
	setTimeout(refresh, 500);
}
refresh();
