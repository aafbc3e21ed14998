/**
 * A write through a linked folder (`docs/notes.md`, `docs -> <elsewhere>`): the broker's request
 * carries where it lands (`lands`), and the bridge copies it into the popover's request, so the
 * popover's "Lands in (through a link)" row shows the file the kernel really writes. The bridge
 * copied every other field of the request but that one, so the row never appeared. Hidden
 * characters in where it lands make the request hidden (shown with code points, never remembered).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { EVENT_CHANNELS, INVOKE_CHANNELS, type PendingApproval } from '../../main/app/bridge/contract.js';
import { LocalRunner } from '../../main/broker/runners/index.js';
import { AGENT, plan, until } from '../broker/helpers.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { recordingHost, top } from './bridge-fixture.js';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-bridge-lands-')));
const workspace = join(base, 'ws');
let gw: RunningGateway;

before(async () => {
  mkdirSync(join(workspace, 'src'), { recursive: true });
  mkdirSync(join(base, 'elsewhere'));
  mkdirSync(join(base, 'else\u202ewhere'));
  symlinkSync(join(base, 'elsewhere'), join(workspace, 'docs'));
  symlinkSync(join(base, 'else\u202ewhere'), join(workspace, 'notes'));
  gw = await startGateway(undefined, { broker: { root: { workspaceRoot: workspace }, cancelGraceMs: 1_000, log: () => {} } });
  gw.gateway.withVirtualAgent('agent', new LocalRunner({ command: process.execPath, args: ['--import', 'tsx', AGENT], reapGraceMs: 1_000 }));
});

after(async () => {
  await gw?.close();
  rmSync(base, { recursive: true, force: true });
});

test('the popover is told where a write through a linked folder lands; a plain write says nothing more; a hidden character there makes it hidden', async () => {
  const { host, attach, seen } = recordingHost(gw);
  attach();
  const shown = async (path: string): Promise<PendingApproval> => {
    await host.handle(INVOKE_CHANNELS.startTask, top, { agent: 'agent', prompt: plan({ approve: { kind: 'write', command_or_path: path } }) });
    const find = (): PendingApproval | undefined => seen<PendingApproval>(EVENT_CHANNELS.approval, (p) => p.commandOrPath === path);
    await until(() => find() !== undefined, `${path} shown`);
    const view = find()!;
    await host.handle(INVOKE_CHANNELS.answerApproval, top, { requestId: view.requestId, verdict: 'denied' });
    return view;
  };
  const linked = await shown('docs/notes.md');
  assert.equal(linked.lands, join(base, 'elsewhere', 'notes.md'));
  assert.equal(linked.hidden, false);
  const plain = await shown('src/a.ts');
  assert.equal(plain.lands, undefined);
  const bidi = await shown('notes/a.md');
  assert.equal(bidi.lands, join(base, 'else\u202ewhere', 'a.md'));
  assert.equal(bidi.hidden, true, 'a right-to-left override in where it lands is shown with code points');
});
