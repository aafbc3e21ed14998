import { setTimeout as delay } from 'node:timers/promises';
import { BrokerError } from '../../worker/worker-session.js';
import type { TaskOutcome } from '../../worker/wire-types.js';
import type { AgentTask } from '../kind.js';
import { runCommand } from './exec.js';
import { ScriptReport } from './report.js';
import { parseScript, type Instruction } from './language.js';
import { commandFolder, pinWorkspace } from './workspace-pin.js';
import { WorkspaceRefusal } from './workspace-path.js';
import { commitWrite, planWrite } from './write-file.js';

const CANCELED: TaskOutcome = { state: 'canceled', message: 'cancelled' };

/** Ends the script early with this outcome (a denial, a refusal, a failed call, `fail`). */
class Stop extends Error {
  constructor(readonly outcome: TaskOutcome) {
    super(outcome.message ?? outcome.state);
  }
}

/**
 * Runs a task's script (`language.ts`), instruction by instruction, and ends the task:
 * `completed` once every line has run; `failed` at the first instruction that fails (an approval
 * denied, a write refused, a command that exits non-zero, an `ask`, `invoke` or `post` the broker
 * refuses or whose callee fails, `fail`); `canceled` when the broker cancels the task. Every
 * report is text (an artifact chunk, sent at once: `ScriptReport`) ending in a new line, so the
 * response reads line by line; a command's output is passed on as it comes.
 * Questions relayed from its callees are passed up (`escalate`), with a step saying so.
 */
export async function runScript(context: AgentTask): Promise<TaskOutcome> {
  const { session, task, events } = context;
  const report = new ScriptReport(events);
  const say = (text: string): void => report.line(text);
  const stopWith = (message: string): never => {
    throw new Stop({ state: 'failed', message });
  };
  session.onQuestion((relayed) => {
    const asked = relayed.request.questions.map((q) => JSON.stringify(q.question)).join(', ');
    report.step(`${relayed.request.asker.agent} asks ${asked}: passed up`);
    return 'escalate';
  });

  const run = async (instruction: Instruction): Promise<void> => {
    switch (instruction.op) {
      case 'say':
        say(instruction.text);
        return;
      case 'echo':
        say(instruction.line);
        return;
      case 'step':
        report.step(instruction.name);
        return;
      case 'fail':
        stopWith(instruction.reason);
        return;
      case 'sleep':
        await delay(instruction.ms, undefined, { signal: task.signal });
        return;
      case 'exec': {
        const { command } = instruction;
        report.step(`asking to run ${command}`);
        const verdict = await session.approve('exec', command, undefined, { signal: task.signal });
        if (verdict !== 'approved') stopWith(`exec denied: ${command}`);
        report.step(`running ${command}`);
        let last = '\n';
        const result = await runCommand(command, {
          cwd: commandFolder(context.workspace), // the pinned folder, not where its path leads now
          signal: task.signal,
          onOutput: (text) => {
            last = text;
            report.text(text);
          },
        });
        if (!last.endsWith('\n')) report.text('\n');
        if (result.droppedBytes > 0) say(`[output cut: ${result.droppedBytes} more bytes not shown]`);
        if (result.ended === 'cancelled') return;
        if (result.ended === 'timeout') {
          say(`[timed out: ${command}]`);
          stopWith(`exec timed out: ${command}`);
        }
        if (result.code === null) {
          say(`[ended by ${result.signal ?? 'a signal'}]`);
          stopWith(`exec ended by ${result.signal ?? 'a signal'}: ${command}`);
        }
        say(`[exit code ${result.code}]`);
        if (result.code !== 0) stopWith(`exec exited with code ${result.code}: ${command}`);
        return;
      }
      case 'write': {
        const plan = await planWrite(context.workspace, instruction.path, instruction.text).catch((err: unknown) => {
          if (err instanceof WorkspaceRefusal) stopWith(`write refused: ${err.message}`);
          throw err;
        });
        report.step(`asking to write ${plan.path} (${plan.diffStat})`);
        const verdict = await session.approve('write', plan.path, plan.diffStat, { signal: task.signal });
        if (verdict !== 'approved') stopWith(`write denied: ${plan.path}`);
        await commitWrite(context.workspace, plan).catch((err: unknown) => {
          if (err instanceof WorkspaceRefusal) stopWith(`write refused: ${err.message}`);
          throw err;
        });
        say(`wrote ${plan.path} (${plan.diffStat})`);
        return;
      }
      case 'ask': {
        report.step(`asking ${JSON.stringify(instruction.question)}`);
        const answers = await session.ask([{ id: 'q1', question: instruction.question, options: instruction.options }], { signal: task.signal });
        say(`answer: ${answers[0]?.answer ?? ''}`);
        return;
      }
      case 'invoke': {
        const { agent, prompt } = instruction;
        report.step(`invoking ${agent}`);
        let callee = agent;
        const result = await session.invokeAgent(agent, prompt, {
          signal: task.signal,
          onProgress: (event) => {
            if ('Admitted' in event) {
              callee = event.Admitted;
              report.step(`${callee} started`);
            } else if ('Step' in event) report.step(`${callee}: ${event.Step}`);
          },
        });
        if (result.response !== '') say(result.response);
        for (const message of result.messages) say(`mail: ${message}`);
        if (!result.success) stopWith(`invoke ${agent}: ${result.error ?? 'it did not complete'}`);
        return;
      }
      case 'agents': {
        const agents = await session.listAgents({ signal: task.signal });
        for (const agent of agents) say(`${agent.name} (${agent.origin}): ${agent.description}`);
        return;
      }
      case 'post': {
        const result = await session.postMessage(instruction.to, instruction.text, { signal: task.signal });
        if (result.status === 'refused') stopWith(`post to ${instruction.to} refused: ${result.reason}`);
        say(`posted to ${instruction.to}`);
        return;
      }
    }
  };

  // Held open for the task: its writes start from this folder and its commands run in it, not by its path (pinWorkspace).
  const releaseWorkspace = await pinWorkspace(context.workspace);
  try {
    for (const instruction of parseScript(task.params.text)) {
      if (task.signal.aborted) break;
      await run(instruction);
    }
    if (task.signal.aborted) return report.end(CANCELED);
    return report.end({ state: 'completed' });
  } catch (err) {
    if (task.signal.aborted) return report.end(CANCELED);
    if (err instanceof Stop) return report.end(err.outcome);
    if (err instanceof BrokerError) return report.end({ state: 'failed', message: err.error.message });
    return report.end({ state: 'failed', message: err instanceof Error ? err.message : String(err) });
  } finally {
    await releaseWorkspace();
  }
}
