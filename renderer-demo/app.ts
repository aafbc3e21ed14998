// The app window. It sees only `window.chatty`, the preload's bridge; the page has no Node. Start
// tasks on agents and watch them, answer the agents' approvals and questions (the public
// <chatty-approvals> element), read the root's mailbox, the gateway's edge log and the approval
// decisions, revoke remembered rules, see how an MCP client connects. Built from the public
// renderer pieces only (../renderer/index.js).
import {
  DANGER_LABEL,
  defineChattyApprovals,
  localClock,
  showExactly,
  type AgentSummary,
  type ApprovalMatch,
  type ApprovalRule,
  type AuditRow,
  type ChattyBridge,
  type EdgeRow,
  type GatewayInfo,
  type MailEntry,
  type ModuleList,
  type ModuleSummary,
  type Snapshot,
  type TaskUpdate,
} from '../renderer/index.js';
import { announce, byId, h } from './dom.js';
import { PluginList } from './plugins.js';
import { TaskBoard } from './tasks.js';

declare global {
  interface Window {
    chatty: ChattyBridge;
  }
}

const MAX_EDGE_ROWS = 200;
const bridge = window.chatty;

/** The scripted agent's instructions (one per line), as hints that insert an example line. */
const HINTS: { word: string; example: string; help: string }[] = [
  { word: 'say', example: 'say hello', help: 'say <text>: a chunk of output' },
  { word: 'step', example: 'step building', help: 'step <name>: a working status' },
  { word: 'exec', example: 'exec echo hi', help: 'exec <command>: runs it in the workspace once you approve' },
  { word: 'write', example: 'write notes.txt hello', help: 'write <path> <text>: writes it in the workspace once you approve' },
  { word: 'ask', example: 'ask Which database? | Postgres | SQLite', help: 'ask <question> | option | option: asks you' },
  { word: 'invoke', example: 'invoke local-reviewer say looks good', help: 'invoke <agent> <prompt>: delegates (\\n in the prompt is a new line)' },
  { word: 'agents', example: 'agents', help: 'agents: lists the agents it may call' },
  { word: 'post', example: 'post root done', help: 'post <to> <text>: leaves a note in a mailbox' },
  { word: 'sleep', example: 'sleep 1000', help: 'sleep <ms>: waits' },
  { word: 'fail', example: 'fail not today', help: 'fail <reason>: ends the task failed' },
];

// --- tabs ------------------------------------------------------------------------------------

function setupTabs(): (id: string) => void {
  const tabs = [...byId('tabs').querySelectorAll<HTMLButtonElement>('[role="tab"]')];
  const select = (tab: HTMLButtonElement, focus: boolean): void => {
    for (const t of tabs) {
      const on = t === tab;
      t.setAttribute('aria-selected', String(on));
      t.tabIndex = on ? 0 : -1;
      const panel = document.getElementById(t.getAttribute('aria-controls') ?? '');
      if (panel) panel.hidden = !on;
    }
    if (focus) tab.focus();
  };
  tabs.forEach((tab, i) => {
    tab.addEventListener('click', () => select(tab, false));
    tab.addEventListener('keydown', (event) => {
      const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
      let target: HTMLButtonElement | undefined;
      if (step !== 0) target = tabs[(i + step + tabs.length) % tabs.length];
      else if (event.key === 'Home') target = tabs[0];
      else if (event.key === 'End') target = tabs[tabs.length - 1];
      if (!target) return;
      event.preventDefault();
      select(target, true);
    });
  });
  return (id) => {
    const tab = tabs.find((t) => t.id === id);
    if (tab) select(tab, false);
  };
}

// --- sidebar ---------------------------------------------------------------------------------

function showAgents(agents: AgentSummary[], pick: (name: string) => void): void {
  const list = byId('agents');
  const select = byId<HTMLSelectElement>('agent');
  if (agents.length === 0) {
    list.replaceChildren(h('li', { className: 'muted' }, 'no agent published'));
    return;
  }
  list.replaceChildren(
    ...agents.map((a) =>
      h(
        'li',
        { className: 'agent' },
        h('button', { className: 'link', attrs: { type: 'button', 'aria-label': `choose ${a.name} for a new task` }, on: { click: () => pick(a.name) } }, a.name),
        h('span', { className: 'muted small', attrs: { title: a.description } }, a.description),
      ),
    ),
  );
  const previous = select.value;
  select.replaceChildren(...agents.map((a) => h('option', { attrs: { value: a.name } }, a.displayName && a.displayName !== a.name ? `${a.name} (${a.displayName})` : a.name)));
  if (agents.some((a) => a.name === previous)) select.value = previous;
}

// --- composer --------------------------------------------------------------------------------

function setupComposer(): { pick: (agent: string) => void } {
  const form = byId<HTMLFormElement>('composer');
  const prompt = byId<HTMLTextAreaElement>('prompt');
  const agent = byId<HTMLSelectElement>('agent');
  const error = byId('composer-error');
  const start = byId<HTMLButtonElement>('start');
  byId('hints').replaceChildren(
    ...HINTS.map((hint) =>
      h(
        'button',
        { className: 'hint', attrs: { type: 'button', title: hint.help, 'aria-label': `insert ${hint.example}: ${hint.help}` }, on: { click: () => insertLine(prompt, hint.example) } },
        hint.word,
      ),
    ),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void submit();
  });
  prompt.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      void submit();
    }
  });
  async function submit(): Promise<void> {
    error.hidden = true;
    const text = prompt.value.trim();
    if (!agent.value) return showError('No agent to start a task on.');
    if (text === '') return showError('Write what the agent should do first.');
    start.disabled = true;
    try {
      const { taskId } = await bridge.startTask({ agent: agent.value, prompt: text });
      announce(`${taskId} started on ${agent.value}`);
      prompt.value = '';
    } catch (err) {
      showError(`Could not start: ${(err as Error).message}`);
    } finally {
      start.disabled = false;
      prompt.focus();
    }
  }
  function showError(text: string): void {
    error.textContent = text;
    error.hidden = false;
  }
  return {
    pick: (name) => {
      agent.value = name;
      prompt.focus();
    },
  };
}

function insertLine(area: HTMLTextAreaElement, line: string): void {
  const before = area.value.slice(0, area.selectionStart);
  const after = area.value.slice(area.selectionEnd);
  const sep = before === '' || before.endsWith('\n') ? '' : '\n';
  area.value = `${before}${sep}${line}${after}`;
  const caret = before.length + sep.length + line.length;
  area.setSelectionRange(caret, caret);
  area.focus();
}

// --- mailbox ---------------------------------------------------------------------------------

function setupMailbox(): { add: (entry: MailEntry) => void; nodes: (names: string[]) => void } {
  const list = byId('mailbox');
  const empty = byId('no-mail');
  const count = byId('mail-count');
  const status = byId('post-status');
  const form = byId<HTMLFormElement>('post');
  const to = byId<HTMLInputElement>('post-to');
  const text = byId<HTMLInputElement>('post-text');
  let unread = 0;
  const seen = new Set<string>();
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (!to.value.trim() || !text.value.trim()) {
      status.textContent = 'Name a node and write a note.';
      return;
    }
    void bridge.postMessage({ to: to.value.trim(), text: text.value }).then(
      (outcome) => {
        status.textContent = outcome.status === 'pending' ? `Left for ${to.value.trim()}: delivered with its next result.` : `Refused: ${outcome.reason.replaceAll('_', ' ')}.`;
        if (outcome.status === 'pending') text.value = '';
      },
      (err: Error) => {
        status.textContent = `Could not post: ${err.message}`;
      },
    );
  });
  byId('tab-mail').addEventListener('click', () => {
    unread = 0;
    count.textContent = '';
  });
  return {
    add: (entry) => {
      if (seen.has(entry.id)) return;
      seen.add(entry.id);
      empty.hidden = true;
      const line =
        entry.direction === 'in'
          ? h('li', { className: 'mail mail-in' }, h('time', {}, localClock(entry.at)), h('strong', {}, `${showExactly(entry.from).text} → root`), h('span', {}, showExactly(entry.text).text))
          : h(
              'li',
              { className: `mail mail-out ${entry.outcome.status === 'refused' ? 'refused' : ''}` },
              h('time', {}, localClock(entry.at)),
              h('strong', {}, `root → ${entry.to}`),
              h('span', {}, entry.text, entry.outcome.status === 'refused' ? h('span', { className: 'reason' }, ` (refused: ${entry.outcome.reason.replaceAll('_', ' ')})`) : null),
            );
      list.prepend(line);
      if (entry.direction === 'in' && byId('tab-mail').getAttribute('aria-selected') !== 'true') {
        unread += 1;
        count.textContent = String(unread);
        announce(`note from ${entry.from}`);
      }
    },
    nodes: (names) => {
      byId('known-nodes').replaceChildren(...[...new Set(names)].map((n) => h('option', { attrs: { value: n } })));
    },
  };
}

// --- edge log --------------------------------------------------------------------------------

function setupEdgeLog(): (row: EdgeRow) => void {
  const body = document.querySelector('#edge tbody');
  const count = byId('edge-count');
  let refusals = 0;
  return (row) => {
    if (!body) return;
    const tr = h('tr', { className: row.reason !== undefined ? 'refused' : undefined });
    tr.append(h('td', {}, h('time', { attrs: { datetime: row.time, title: row.time } }, localTime(row.time))));
    for (const cell of [row.method, row.path, String(row.status), row.durationMs.toFixed(1), row.reason ?? '']) tr.append(h('td', {}, showExactly(cell).text));
    body.prepend(tr);
    while (body.children.length > MAX_EDGE_ROWS) body.lastElementChild?.remove();
    if (row.reason !== undefined) {
      refusals += 1;
      count.textContent = `${refusals} refused`;
    }
  };
}

/** `14:02:03.042` in the reader's local time (the ISO time, UTC, in the cell's title). */
function localTime(iso: string): string {
  return `${localClock(iso)}.${String(new Date(iso).getMilliseconds()).padStart(3, '0')}`;
}

// --- approval decisions and remembered rules ----------------------------------------------------

function setupAudit(): (row: AuditRow) => void {
  const body = document.querySelector('#audit tbody');
  const empty = byId('no-audit');
  return (row) => {
    if (!body) return;
    empty.hidden = true;
    const cells = [
      h('time', { attrs: { datetime: row.time, title: row.time } }, localTime(row.time)),
      row.verdict,
      row.by,
      h('span', { attrs: { title: `chain: ${row.chain.map((r) => showExactly(r).text).join(' → ')}` } }, showExactly(row.agent).text),
      row.kind,
      h('code', {}, showExactly(row.command_or_path).text),
      row.danger.map((tag) => DANGER_LABEL[tag] ?? tag).join(', '),
    ];
    body.prepend(h('tr', { className: `verdict-${row.verdict}` }, ...cells.map((cell) => h('td', {}, cell))));
    while (body.children.length > MAX_EDGE_ROWS) body.lastElementChild?.remove();
  };
}

function matchText(match: ApprovalMatch): string {
  if ('exact' in match) return showExactly(match.exact).text;
  if ('prefix' in match) return `${showExactly(match.prefix).text} *`;
  return showExactly(match.glob).text;
}

function setupRules(): () => Promise<void> {
  const list = byId('rules');
  const empty = byId('no-rules');
  const status = byId('rules-status');
  const draw = (rules: ApprovalRule[]): void => {
    empty.hidden = rules.length > 0;
    list.replaceChildren(
      ...rules.map((rule) => {
        const what = `${rule.effect === 'allow' ? 'Allow' : 'Deny'} ${rule.kind === 'exec' ? 'commands' : 'writes'} matching ${matchText(rule.match)} for ${rule.agent === '*' ? 'every agent' : rule.agent}${rule.task !== undefined ? ` in task ${rule.task}` : ' always'}`;
        const revoke = h('button', { className: 'revoke', attrs: { type: 'button', 'aria-label': `Revoke: ${what}` } }, 'Revoke');
        revoke.addEventListener('click', () => {
          revoke.disabled = true;
          void bridge.revokeApprovalRule({ id: rule.id }).then(
            ({ revoked }) => {
              status.textContent = revoked ? `Revoked: ${what}.` : 'That rule was already gone.';
              return refresh();
            },
            (err: Error) => {
              revoke.disabled = false;
              status.textContent = `Could not revoke: ${err.message}`;
            },
          );
        });
        return h(
          'li',
          { className: `rule rule-${rule.effect}`, attrs: { 'data-rule-id': rule.id } },
          h('span', { className: 'rule-text' }, h('strong', {}, rule.effect), ` ${rule.kind} · `, h('code', {}, matchText(rule.match)), ` · ${rule.agent === '*' ? 'every agent' : rule.agent} · ${rule.task !== undefined ? `task ${rule.task}` : 'always'}`),
          revoke,
        );
      }),
    );
  };
  const refresh = async (): Promise<void> => {
    try {
      draw(await bridge.listApprovalRules());
    } catch (err) {
      status.textContent = `Could not list the rules: ${(err as Error).message}`;
    }
  };
  byId('tab-rules').addEventListener('click', () => void refresh());
  return refresh;
}

// --- connect ---------------------------------------------------------------------------------

/** The MCP endpoints the connect panel was last drawn with: it is drawn again only when they change (a redraw would take the reader's focus). */
let connectDrawnFor: string | undefined;

function showConnect(info: GatewayInfo, modules: ModuleSummary[]): void {
  const endpoints = JSON.stringify(modules.map((m) => m.surfaces));
  if (endpoints === connectDrawnFor) return;
  connectDrawnFor = endpoints;
  const where = byId('where');
  where.textContent = `serving on ${info.socketPath}`;
  const module = modules.find((m) => m.surfaces.length > 0)?.name ?? '<module>';
  const curl = `curl --unix-socket ${info.socketPath} \\\n  -H "Authorization: Bearer $(cat ${info.tokenPath})" \\\n  http://localhost/`;
  const client = JSON.stringify({ command: 'npx', args: ['chatty-gateway', 'mcp-stdio', module, '--runtime-dir', info.runtimeDir] }, null, 2);
  const block = (id: string, label: string, text: string): HTMLElement => {
    const pre = h('pre', { className: 'copyable', attrs: { id, tabindex: '0', 'aria-label': label } }, text);
    const button = h('button', { attrs: { type: 'button', 'aria-describedby': id } }, 'Copy');
    button.addEventListener('click', () => {
      void navigator.clipboard.writeText(text).then(
        () => announce('copied'),
        () => {
          const range = document.createRange();
          range.selectNodeContents(pre);
          getSelection()?.removeAllRanges();
          getSelection()?.addRange(range);
          announce('selected: copy it with Ctrl+C');
        },
      );
    });
    return h('div', { className: 'copy-block' }, pre, button);
  };
  byId('connect').replaceChildren(
    h('h2', {}, 'How an MCP client connects'),
    h('p', {}, 'The gateway serves MCP on an owner-only Unix socket; every request needs the launch token, which is new on each start and stays in its file (this window never sees it).'),
    h('dl', { className: 'facts' }, h('dt', {}, 'Socket'), h('dd', {}, h('code', { className: 'socket-path' }, info.socketPath)), h('dt', {}, 'Token file'), h('dd', {}, h('code', { className: 'token-path' }, info.tokenPath))),
    h('h3', {}, 'A client that launches a command (the stdio bridge)'),
    block('connect-client', 'MCP client server configuration', client),
    h('h3', {}, 'Over HTTP on the socket'),
    block('connect-curl', 'curl example', curl),
    h('p', { className: 'muted small' }, `MCP endpoints: ${modules.flatMap((m) => m.surfaces).join(', ') || 'none (no plugin loaded)'}.`),
  );
}

// --- start -----------------------------------------------------------------------------------

async function main(): Promise<void> {
  const showTab = setupTabs();
  // The approvals element loads what waits and listens for more on its own.
  defineChattyApprovals();
  const approvals = byId<HTMLElement & { bridge: ChattyBridge | undefined }>('approvals');
  approvals.bridge = bridge;
  const mailbox = setupMailbox();
  const addEdgeRow = setupEdgeLog();
  const addAuditRow = setupAudit();
  const refreshRules = setupRules();
  const board = new TaskBoard(bridge, byId('tasks'), byId('no-tasks'), (names) => mailbox.nodes(names));
  const composer = setupComposer();
  const plugins = new PluginList(byId('modules'));
  let info: GatewayInfo | undefined;
  // Each push is the whole plugin list as it is now: once one has come, it is newer than the first load.
  let served: ModuleSummary[] | undefined;
  bridge.onModules((list: ModuleList) => {
    served = list.modules;
    plugins.show(list.modules, list.pending, list.changes);
    if (info) showConnect(info, list.modules);
  });

  // Events that arrive before the snapshot's answer are in the snapshot already.
  let ready = false;
  const live =
    <T>(apply: (value: T) => void) =>
    (value: T): void => {
      if (ready) apply(value);
    };
  bridge.onTask(live<TaskUpdate>((u) => board.apply(u)));
  bridge.onMessage(live(mailbox.add));
  bridge.onEdgeRow(live(addEdgeRow));
  bridge.onApprovalDecision(
    live((row: AuditRow) => {
      addAuditRow(row);
      void refreshRules(); // a decision may have remembered a rule
    }),
  );

  const snapshot: Snapshot = await bridge.snapshot();
  ready = true;
  board.load(snapshot.tasks);
  for (const row of snapshot.edgeRows) addEdgeRow(row);
  for (const entry of snapshot.mailbox) mailbox.add(entry);
  for (const row of snapshot.auditRows) addAuditRow(row);
  await refreshRules();

  const [gateway, agents, modules] = await Promise.all([bridge.gatewayInfo(), bridge.listAgents(), bridge.listModules()]);
  info = gateway;
  showAgents(agents, (name) => {
    showTab('tab-tasks');
    composer.pick(name);
  });
  if (served === undefined) {
    served = modules;
    plugins.show(modules, snapshot.pendingModules);
  }
  showConnect(gateway, served);
  document.body.dataset['ready'] = 'true';
}

main().catch((err: unknown) => {
  byId('where').textContent = `could not reach the gateway: ${(err as Error)?.message ?? String(err)}`;
});
