import { dirname } from 'node:path';
import type { z } from 'zod';
import type { RootTransport } from '../../broker/index.js';
import type { ProtocolGateway, StartedGateway } from '../../gateway/index.js';
import type { PluginGrants } from '../../plugins/grants/index.js';
import {
  EVENT_CHANNELS,
  INVOKE_CHANNELS,
  InvokeRequestSchemas,
  type AgentSummary,
  type ApprovalRule,
  type AuditRow,
  type EdgeRow,
  type EventChannel,
  type EventPayloads,
  type GatewayInfo,
  type InvokeChannel,
  type InvokeResponses,
  type MailEntry,
  type MailOutcome,
  type ModuleSummary,
  type RevokeApprovalRule,
  type Snapshot,
} from './contract.js';
import { ModuleListFeed, moduleSummaries, pendingModules } from './module-list.js';
import { PendingRequests } from './pending-requests.js';
import { BridgeRefusal } from './refusal.js';
import { TaskBoard } from './task-board.js';

export { BridgeRefusal } from './refusal.js';

/** Who sent an IPC message, as the Electron layer reports it. */
export interface IpcSender {
  /** The URL of the sending frame. */
  url: string;
  /** Whether the sender is the window's top frame (not an iframe). */
  isMainFrame: boolean;
  /** Why the window's top frame is refused though it is at the page (its preload not the checked copy), saying what to do. */
  refusal?: string;
}

/** How the host reaches the one app window: `webContents.send` in Electron. */
export type WindowSend = <C extends EventChannel>(channel: C, payload: EventPayloads[C]) => void;

export interface BridgeHostOptions {
  /** Where refusals and other notes go (the main-process log). */
  log?: (line: string) => void;
  /** The plugins' grant desk (`registry.grants`): its capability requests are put to the window too. */
  grants?: GrantDesk | undefined;
}

/** What the bridge needs of a `PluginGrants` desk: to be its one handler. */
export type GrantDesk = Pick<PluginGrants, 'onRequest'>;

/** Kept for a (re)loaded window's snapshot. */
const MAX_EDGE_ROWS = 200;
const MAX_AUDIT_ROWS = 200;
const MAX_MAIL = 200;

/**
 * The main-process side of the bridge, free of Electron so it runs under test. It is the root's
 * human: it answers the root transport's approvals and questions by asking the window, runs the
 * tasks the window starts, relays the root's mailbox, the edge log and the plugin list as it
 * changes (`ModuleListFeed`); the tasks are its `TaskBoard`'s, what waits for the window's answer
 * its `PendingRequests`'. Every call is checked
 * (the sender is the window's top frame at the app's page, the channel is known, the payload
 * parses) before anything happens. `main/app/electron-bridge.ts` binds it to `ipcMain` and the
 * window's `webContents`.
 *
 * Window lifecycle (electron-bridge.ts calls these): `attachWindow(send)` when the window exists,
 * and again when a crashed page is loaded again; `windowReset(reason)` when its page reloads or
 * navigates (every waiting approval is denied, every waiting question withdrawn, since nobody is
 * looking at them any more); `pageGone(reason)` when there is no page to ask: it crashed, or the
 * top frame is not the page (another URL, a fragment, an error document) (the same, and from then
 * on approvals are denied and questions refused at once until `attachWindow` again); `close()`
 * when the window closes or the bridge is detached (`pageGone()`, and the host ends for good).
 */
export class BridgeHost {
  private readonly root: RootTransport;
  private readonly log: (line: string) => void;
  private send: WindowSend | undefined;
  private readonly tasks: TaskBoard;
  private readonly requests: PendingRequests;
  private readonly mailbox: MailEntry[] = [];
  private readonly edgeRows: EdgeRow[] = [];
  private readonly auditRows: AuditRow[] = [];
  private readonly approvals: ProtocolGateway['approvals'];
  private readonly unsubscribe: (() => void)[] = [];
  /** This host as the root's human (its approval and question handlers), until another takes the root. */
  private readonly rootHandlers: (() => void)[] = [];
  private readonly grants: GrantDesk | undefined;
  /** Removes this host as the grant desk's handler (set while it holds the desk). */
  private deskHandler: (() => void) | undefined;
  private nextMail = 0;
  private closed = false;

  constructor(
    private readonly gateway: ProtocolGateway,
    private readonly started: StartedGateway,
    /** The only page allowed to call: the app window's own URL. */
    private readonly trustedUrl: (url: string) => boolean,
    options: BridgeHostOptions = {},
  ) {
    this.root = gateway.transport();
    this.log = options.log ?? (() => {});
    const emit: WindowSend = (channel, payload) => this.emit(channel, payload);
    this.tasks = new TaskBoard(this.root, emit);
    this.requests = new PendingRequests(this.tasks, emit, () => this.send !== undefined);
    this.approvals = gateway.approvals;
    this.grants = options.grants;
    this.takeRoot();
    this.takeDesk();
    this.unsubscribe.push(
      this.root.onMessage((message) => this.addMail({ id: message.id, direction: 'in', from: message.from, text: message.text, at: Date.now() })),
      gateway.onEdge((row) => this.addEdgeRow({ ...row })),
    );
    this.unsubscribe.push(this.approvals.onDecision((row) => this.addAuditRow(structuredClone(row))));
    this.unsubscribe.push(new ModuleListFeed(gateway.registry, (list) => this.emit(EVENT_CHANNELS.modules, list), this.log).start());
  }

  readonly invokeChannels = Object.keys(InvokeRequestSchemas) as InvokeChannel[];

  /** One renderer call: refused (rejects with `BridgeRefusal`) unless the sender, channel and payload are all right. */
  async handle(channel: string, sender: IpcSender, payload: unknown): Promise<unknown> {
    try {
      return await this.dispatch(channel, sender, payload);
    } catch (err) {
      if (err instanceof BridgeRefusal) this.log(`bridge: ${err.message}`);
      throw err;
    }
  }

  /**
   * Makes this host the root's human: the root's approvals and questions come here from the one
   * host that had them before. The constructor does it; electron-bridge.ts again when the bridge
   * attached after this one on the gateway is gone and this one's window is still open.
   */
  takeRoot(): void {
    if (this.closed) return;
    for (const off of this.rootHandlers.splice(0)) off();
    this.rootHandlers.push(
      this.root.onApproval((request, signal) => this.requests.askApproval(request, signal)),
      this.root.onQuestion((request, signal) => this.requests.askQuestion(request, signal)),
    );
  }

  /**
   * Makes this host the grant desk's handler (when it was given one): the desk hands it the
   * requests still open. The constructor does it; electron-bridge.ts again when the bridge given
   * the same desk after this one is gone and this one's window is still open (whatever the gateway).
   */
  takeDesk(): void {
    if (this.closed || !this.grants) return;
    this.deskHandler?.();
    this.deskHandler = this.grants.onRequest((request, signal) => this.requests.askGrant(request, signal));
  }

  /**
   * This host no longer answers for the desk (its window is gone): what it held goes back to the
   * desk, for its next handler. With `reason`, called while the window is still attached, the page
   * is told each request it was shown is withdrawn, and why (a page that left for another route of
   * its document and came back kept it otherwise, beside the same request handed to it again).
   */
  dropDesk(reason?: string): void {
    const off = this.deskHandler;
    this.deskHandler = undefined;
    if (off === undefined) return;
    if (reason === undefined) off();
    else this.requests.handGrantsBack(reason, off);
  }

  /**
   * The window exists: events go to it through `send`. The grant desk's requests this host took
   * before it (at its construction) are sent now: a page that stays loaded across a bridge's
   * detach and re-attach reads no new snapshot (a page still loading finds them there too).
   */
  attachWindow(send: WindowSend): void {
    this.send = send;
    this.requests.resendGrants();
  }

  /** Whether a window is attached: between `attachWindow` and `pageGone` (or `close`). */
  get hasWindow(): boolean {
    return this.send !== undefined;
  }

  /**
   * The window's page reloads or navigates: its waiting approvals are denied and its questions
   * withdrawn. A plugin's capability request keeps waiting (no agent is held up by it): the next
   * page finds it in its snapshot.
   */
  windowReset(reason = 'the window was reloaded', tellPage = false): void {
    this.requests.withdrawAll(reason, tellPage);
  }

  /**
   * There is no page to ask: it crashed or the top frame left it (electron-bridge.ts), or
   * `close()` (the window closed, the bridge taken off it). As a reset, the window told of each
   * request withdrawn (the page, or the app's own page it went to: its ids and payloads, nothing it
   * could answer), and nothing is sent, approvals denied and questions refused at once, until a
   * window is attached again (`attachWindow`: the page loaded again).
   */
  pageGone(reason = 'the window was closed'): void {
    this.windowReset(reason, true);
    this.send = undefined;
  }

  /**
   * Stops answering for the root and forgets the window; running tasks are left to `gateway.stop()`.
   * The grant desk's requests go back to it first, so the page still there is told they are withdrawn.
   */
  close(reason = 'the bridge was detached'): void {
    if (this.closed) return;
    this.closed = true;
    this.dropDesk(reason);
    for (const off of this.rootHandlers.splice(0)) off();
    this.pageGone(reason);
    for (const off of this.unsubscribe.splice(0)) off();
  }

  // -------------------------------------------------------------------------------------------

  private async dispatch(channel: string, sender: IpcSender, payload: unknown): Promise<unknown> {
    if (!sender.isMainFrame || !this.trustedUrl(sender.url)) {
      throw new BridgeRefusal(`refused ${channel}: ${sender.refusal ?? `sender ${sender.url} is not the trusted window`}`);
    }
    if (!isInvokeChannel(channel)) throw new BridgeRefusal(`refused: unknown channel ${channel}`);
    if (this.closed) throw new BridgeRefusal(`refused ${channel}: the bridge is closed`);
    switch (channel) {
      case INVOKE_CHANNELS.gatewayInfo:
        parse(channel, payload);
        return this.gatewayInfo();
      case INVOKE_CHANNELS.listAgents:
        parse(channel, payload);
        return this.listAgents();
      case INVOKE_CHANNELS.listModules:
        parse(channel, payload);
        return this.listModules();
      case INVOKE_CHANNELS.snapshot:
        parse(channel, payload);
        return this.snapshot();
      case INVOKE_CHANNELS.startTask:
        return this.tasks.start(parse(channel, payload));
      case INVOKE_CHANNELS.cancelTask:
        return this.tasks.cancel(parse(channel, payload).taskId);
      case INVOKE_CHANNELS.answerApproval:
        return this.requests.answerApproval(parse(channel, payload));
      case INVOKE_CHANNELS.answerQuestion:
        return this.requests.answerQuestion(parse(channel, payload));
      case INVOKE_CHANNELS.answerGrant:
        return this.requests.answerGrant(parse(channel, payload));
      case INVOKE_CHANNELS.postMessage: {
        const { to, text } = parse(channel, payload);
        return this.postMessage(to, text);
      }
      case INVOKE_CHANNELS.listApprovalRules:
        parse(channel, payload);
        return this.listRules();
      case INVOKE_CHANNELS.revokeApprovalRule:
        return this.revokeRule(parse(channel, payload));
    }
  }

  private emit<C extends EventChannel>(channel: C, payload: EventPayloads[C]): void {
    try {
      this.send?.(channel, payload);
    } catch (err) {
      this.log(`bridge: could not send ${channel}: ${(err as Error)?.message ?? String(err)}`);
    }
  }

  private gatewayInfo(): InvokeResponses['chatty:gateway-info'] {
    const info: GatewayInfo = { socketPath: this.started.socketPath, tokenPath: this.started.tokenPath, runtimeDir: dirname(this.started.socketPath) };
    return info;
  }

  private async listAgents(): Promise<AgentSummary[]> {
    const agents = await this.root.listAgents();
    return agents.map((a) => ({
      name: a.name,
      displayName: a.displayName,
      description: a.description,
      skills: a.skills.map((s) => ({ name: s.name, description: s.description, examples: [...s.examples] })),
    }));
  }

  /** The loaded modules (`registry.list()`) with their tools (each handle's `listTools()`). */
  private listModules(): Promise<ModuleSummary[]> {
    return moduleSummaries(this.gateway.registry);
  }

  private snapshot(): Snapshot {
    const { approvals, questions, grants } = this.requests.views();
    return structuredClone({
      tasks: this.tasks.views(),
      approvals,
      questions,
      grants,
      pendingModules: pendingModules(this.gateway.registry),
      mailbox: this.mailbox,
      edgeRows: this.edgeRows,
      auditRows: this.auditRows,
    });
  }

  // --- remembered rules and the audit log ---------------------------------------------------------

  private listRules(): ApprovalRule[] {
    return structuredClone(this.approvals.list());
  }

  private revokeRule({ id }: RevokeApprovalRule): { revoked: boolean } {
    return { revoked: this.approvals.remove(id) };
  }

  private addAuditRow(row: AuditRow): void {
    this.auditRows.push(row);
    if (this.auditRows.length > MAX_AUDIT_ROWS) this.auditRows.splice(0, this.auditRows.length - MAX_AUDIT_ROWS);
    this.emit(EVENT_CHANNELS.approvalDecision, structuredClone(row));
  }

  // --- mailbox and edge log ---------------------------------------------------------------------

  private async postMessage(to: string, text: string): Promise<MailOutcome> {
    const outcome = await this.root.post(to, text);
    this.addMail({ id: `out-${++this.nextMail}`, direction: 'out', to, text, at: Date.now(), outcome: { ...outcome } });
    return outcome;
  }

  private addMail(entry: MailEntry): void {
    this.mailbox.push(entry);
    if (this.mailbox.length > MAX_MAIL) this.mailbox.splice(0, this.mailbox.length - MAX_MAIL);
    this.emit(EVENT_CHANNELS.message, { ...entry });
  }

  private addEdgeRow(row: EdgeRow): void {
    this.edgeRows.push(row);
    if (this.edgeRows.length > MAX_EDGE_ROWS) this.edgeRows.splice(0, this.edgeRows.length - MAX_EDGE_ROWS);
    this.emit(EVENT_CHANNELS.edgeRow, { ...row });
  }
}

function isInvokeChannel(channel: string): channel is InvokeChannel {
  return Object.hasOwn(InvokeRequestSchemas, channel);
}

function parse<C extends InvokeChannel>(channel: C, payload: unknown): z.infer<(typeof InvokeRequestSchemas)[C]> {
  const parsed = InvokeRequestSchemas[channel].safeParse(payload);
  if (!parsed.success) throw new BridgeRefusal(`refused ${channel}: invalid payload`);
  return parsed.data as z.infer<(typeof InvokeRequestSchemas)[C]>;
}
