/** The one way the shim asks the operator: the call's dialog, the effects review and the headless wait. */
import type { ExtensionContext, ExtensionUIContext } from "@mariozechner/pi-coding-agent";
import type { Answer, Sidecar } from "./sidecar.ts";
import { ANSWER, APPROVAL, expect, has, type Of, RpcError } from "./wire.ts";

/** While a question is open, typed text is the operator's, never an answer (pi's select moves on j/k and takes
 * Enter: "jjj" + Enter said Yes). Text and pastes are held, then put back in the editor. */
export function holdTyping(ui: ExtensionContext["ui"] | undefined): () => void {
	const held: string[] = [];
	const take = (d: string) => /^\x1b\[200~([\s\S]*?)(?:\x1b\[201~)?$/.exec(d)?.[1] ?? (/^[^\x00-\x1f\x7f]+$/.test(d) ? d : undefined);
	const off = ui?.onTerminalInput((d) => (take(d) === undefined ? undefined : (held.push(take(d)!), { consume: true })));
	return () => {
		off?.();
		if (held.length && ui) ui.setEditorText(ui.getEditorText() + held.join(""));
		if (held.length) ui?.notify("operator-guard: what you typed while the question was open was not taken as an answer; it is back in the editor", "info");
	};
}

/** One question to the operator, on every screen at once; the first answer wins. With a UI, pi's dialog (`dialog`:
 * its options, and `more` for the option that shows the rest first); without one, `notice` on stderr (the operator's,
 * never the model's). Either races the answer another screen gives (pushed by the sidecar that asked, `to`) and the
 * timeout; pi's own answer goes to that sidecar by the question's id. What may run is settled there from the broker:
 * the outcome only says which answer won. `gone`: no UI, and the sidecar that asked went away (nobody can answer). */
export type Question = { approval?: Of<typeof APPROVAL>; to: number; timeoutMs: number; notice: string; decide: (choice: string) => { decision: "yes" | "no"; grant?: number };
	dialog?: { title: string; message: string; options: string[]; more?: { choice: string; text: string } } };
export type Outcome = { decision: "yes" | "no" | "timeout" | "gone"; by: string; choice?: string; said?: string; grant?: number; failed?: unknown };
export const ask = async (sidecar: Sidecar, ui: ExtensionUIContext | undefined, q: Question): Promise<Outcome> => {
	const asked = Date.now();
	const closer = new AbortController();
	const late = (): boolean => Date.now() - asked >= q.timeoutMs - 20;
	const heard = q.approval ? sidecar.answered(q.approval.id, q.to, closer.signal) : new Promise<never>(() => undefined);
	const fromElsewhere = (a: Answer): Outcome => ({ decision: a.decision === "yes" ? "yes" : "no", by: a.approver, said: a.reason ?? undefined, grant: a.grant ?? undefined });
	let elsewhere: Answer | undefined;
	let choice: string | undefined;
	if (!ui || !q.dialog) {
		if (!q.approval) return { decision: "no", by: "nobody" }; // no screen to ask
		process.stderr.write(`${q.notice.replaceAll("\n", " ")}\n`);
		let timer: NodeJS.Timeout | undefined;
		const answer = await Promise.race([heard, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), q.timeoutMs)))]).finally(() => (clearTimeout(timer), closer.abort()));
		if (answer instanceof Error) return { decision: "gone", by: "nobody", failed: answer };
		return answer ? fromElsewhere(answer) : { decision: "timeout", by: "nobody" };
	}
	const dialog = q.dialog;
	void heard.then((a) => (a instanceof Error ? undefined : ((elsewhere = a), closer.abort()))); // gone: pi's dialog stays the one screen
	let first = true; // the first ask waits the whole timeout; after the rest is shown, what is left of it
	const left = () => (first ? ((first = false), q.timeoutMs) : Math.max(1, q.timeoutMs - (Date.now() - asked)));
	const select = (text: string, items: string[]) => ui.select(`${dialog.title}\n${text}`, items, { timeout: left(), signal: closer.signal });
	const draft = ui.getEditorText?.() ?? ""; // what the operator was typing is given back
	const typed = holdTyping(ui);
	try {
		choice = await select(dialog.message, dialog.options);
		while (dialog.more && choice === dialog.more.choice && !elsewhere) {
			await select(dialog.more.text, ["Back"]);
			choice = !late() && !elsewhere ? await select(dialog.message, dialog.options) : undefined;
		}
	} finally {
		closer.abort();
		if (draft && ui.getEditorText?.() !== draft) ui.setEditorText?.(draft);
		typed();
	}
	if (elsewhere) return fromElsewhere(elsewhere);
	if (choice === undefined || choice === dialog.more?.choice) return { decision: late() ? "timeout" : "no", by: "pi-dialog" };
	const here = q.decide(choice);
	const out: Outcome = { ...here, by: "pi-dialog", choice };
	if (!q.approval) return out;
	try {
		// Never to a replacement sidecar: a restart approves nothing (it has no such question).
		const params = { id: q.approval.id, digest: q.approval.digest, decision: here.decision, ...(here.grant !== undefined ? { grant: here.grant } : {}) };
		const said = expect("approvals.answer", await sidecar.call("approvals.answer", params, { to: q.to }), { outcome: "string", answer: "object?" });
		if (said.outcome !== "accepted" && has(said.answer, ANSWER)) return fromElsewhere(said.answer); // another screen was first
	} catch (err) {
		if (!(err instanceof RpcError)) out.failed = err; // the sidecar went away with the question
	}
	return out;
};
