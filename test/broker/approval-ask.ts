/**
 * A real gateway with a real worker, asked a row of approvals: the approval tests that check what
 * a remembered rule approves (and what a person is asked) share it.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { LocalRunner, ProtocolGateway, type ApprovalRequest, type NewApprovalRule } from '../../main/index.js';
import { ModuleRegistry } from '../../main/plugins/index.js';
import { AGENT, plan, splitJson } from './helpers.js';

/**
 * Each request put by a worker in `workspace` to a gateway whose files live under `home` and that
 * holds `rules` (made first by `setUp`): the verdicts, and what a person was asked (each denied).
 */
export async function askGateway(home: string, workspace: string, rules: NewApprovalRule['match'][], kind: 'exec' | 'write', requests: string[], setUp = (): void => {}): Promise<{ verdicts: string[]; asked: ApprovalRequest[] }> {
  const registry = new ModuleRegistry({ cacheDir: join(home, 'cache'), logger: { log() {} }, grants: { file: join(home, '.config', 'chatty', 'plugin-grants.json'), locks: [] } });
  const runner = new LocalRunner({ command: process.execPath, args: ['--import', import.meta.resolve('tsx'), AGENT], reapGraceMs: 1_000 });
  const gateway = new ProtocolGateway(registry, {
    runtimeDir: join(home, '.cache', 'chatty-run'),
    approvals: { file: join(home, '.config', 'chatty', 'approvals.json') },
    broker: { cancelGraceMs: 1_000, log: () => {}, root: { workspaceRoot: workspace } },
  }).withVirtualAgent('coder', runner);
  await gateway.start();
  try {
    const asked: ApprovalRequest[] = [];
    gateway.transport().onApproval((request) => {
      asked.push(request);
      return 'denied';
    });
    for (const match of rules) gateway.approvals.add({ effect: 'allow', kind, agent: '*', match });
    setUp();
    const result = await gateway.transport().invoke('coder', plan({ seq: requests.map((command) => ({ approve: { kind, command_or_path: command } })) }));
    assert.equal(result.success, true, result.error);
    return { verdicts: splitJson(result.response).flat() as string[], asked };
  } finally {
    await gateway.stop();
    await registry.close();
  }
}
