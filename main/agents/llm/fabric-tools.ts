import { z } from 'zod';
import { BrokerError, type TaskMapper, type WorkerSession } from '../../worker/index.js';
import { WorkspaceRefusal, commandFolder, countDiffStat, replaceFileContent, resolveInWorkspace, runCommand, type ExecResult } from '../scripted/index.js';
import { ToolRefusal, type AgentTool, type JsonSchemaObject } from './agent-tool.js';

/** What the fabric's tools act through and on. */
export interface FabricToolContext {
  session: WorkerSession;
  /** The task's mapper: a callee's progress becomes this task's steps. */
  map: TaskMapper;
  /** The directory commands run in and files are written under. */
  workspace: string;
  /** The environment of an approved command. */
  commandEnv: NodeJS.ProcessEnv;
  execTimeoutMs: number;
}

/** The fabric's tool names (no `__`: plugin tools always have one). */
export const FABRIC_TOOL_NAMES = ['list_agents', 'invoke_agent', 'ask_user', 'exec', 'write_file', 'post_message'] as const;

const ListAgentsArgs = z.strictObject({});
const InvokeAgentArgs = z.strictObject({
  agent: z.string().min(1).describe('the agent to run the task: a name from list_agents'),
  prompt: z.string().min(1).describe("the task's text, everything the agent needs to know"),
});
const AskUserArgs = z.strictObject({
  question: z.string().min(1).describe('the question, on its own'),
  options: z.array(z.string()).optional().describe('answers to choose from, if the question has a few likely ones; the user may still answer otherwise'),
});
const ExecArgs = z.strictObject({
  command: z.string().min(1).describe('a shell command line, run with /bin/sh -c in the workspace'),
});
const WriteFileArgs = z.strictObject({
  path: z.string().min(1).describe('the file, relative to the workspace, folders separated by "/" (no absolute path, no ".." segment, no backslash)'),
  content: z.string().describe("the file's whole new content"),
});
const PostMessageArgs = z.strictObject({
  to: z.string().min(1).describe('"root" (the user\'s side) or an agent node started under the same task, e.g. "helper-0"'),
  text: z.string().min(1),
});

/** The fabric's calls as the model's tools: agents, the user, and approved commands and writes in the workspace. */
export function fabricTools(ctx: FabricToolContext): AgentTool[] {
  const { session } = ctx;
  return [
    tool('list_agents', 'Lists the agents you can hand work to with invoke_agent.', ListAgentsArgs, async (_args, signal) => {
      const agents = await refusingBrokerErrors(() => session.listAgents({ signal }));
      return JSON.stringify(agents.map((a) => ({ name: a.name, description: a.description, skills: a.skills.map((s) => s.name) })));
    }),
    tool(
      'invoke_agent',
      "Runs a task on another agent and waits for its answer. It works in its own workspace; what it reports is its answer's text.",
      InvokeAgentArgs,
      async ({ agent, prompt }, signal) => {
        const result = await refusingBrokerErrors(() =>
          session.invokeAgent(agent, prompt, {
            signal,
            onProgress: (event) => {
              if ('Step' in event) ctx.map.step(`${agent}: ${event.Step}`);
              else if ('Admitted' in event) ctx.map.step(`${agent} started as ${event.Admitted}`);
            },
          }),
        );
        const mail = result.messages.length > 0 ? `\n\nmessages for you:\n${result.messages.join('\n')}` : '';
        if (result.success) return `${result.response}${mail}`;
        const partial = result.response === '' ? '' : `\nits partial answer: ${result.response}`;
        throw new ToolRefusal(`${agent} did not complete: ${result.error ?? 'no reason given'}${partial}${mail}`);
      },
    ),
    tool('ask_user', 'Asks the user a question and waits for the answer. Ask only what you cannot find out yourself.', AskUserArgs, async ({ question, options }, signal) => {
      const answers = await refusingBrokerErrors(() => session.ask([{ id: 'q1', question, options: options ?? [] }], { signal }));
      const answer = answers.find((a) => a.id === 'q1') ?? answers[0];
      if (!answer) throw new ToolRefusal('the user gave no answer');
      return answer.answer;
    }),
    tool(
      'exec',
      'Runs a shell command in your workspace once the user approves it, and reports its exit code and output (stdout and stderr together).',
      ExecArgs,
      async ({ command }, signal) => {
        // A refusal of the ask itself (past the call rate) is the model's to read, as a denial is.
        const verdict = await refusingBrokerErrors(() => session.approve('exec', command, undefined, { signal }));
        if (verdict !== 'approved') throw new ToolRefusal(`the user denied running ${JSON.stringify(command)}; it was not run`);
        ctx.map.step(`running ${command}`);
        let output = '';
        const result = await runCommand(command, {
          cwd: commandFolder(ctx.workspace), // the pinned folder, not where its path leads now
          env: ctx.commandEnv,
          timeoutMs: ctx.execTimeoutMs,
          signal,
          onOutput: (text) => (output += text),
        });
        signal.throwIfAborted();
        return describeCommand(result, output, ctx.execTimeoutMs);
      },
    ),
    tool(
      'write_file',
      'Writes a file inside your workspace (creating its folders) once the user approves it. Replaces the whole file.',
      WriteFileArgs,
      async ({ path, content }, signal) => {
        const file = await refusingOutside(() => resolveInWorkspace(ctx.workspace, path));
        // `against`: the file the diff stat was counted against; the write replaces only that one.
        const { diffStat: stat, against } = await refusingOutside(() => countDiffStat(ctx.workspace, file, path, content));
        // The path exactly as the model gave it: what the human approves is what is written.
        const verdict = await refusingBrokerErrors(() => session.approve('write', path, stat, { signal }));
        if (verdict !== 'approved') throw new ToolRefusal(`the user denied writing ${path}; it was not written`);
        // Checked again now that the human has decided (parents made, each inside), and never through a symlink.
        const target = await refusingOutside(() => resolveInWorkspace(ctx.workspace, path, { createParents: true }));
        await refusingOutside(() => replaceFileContent(ctx.workspace, target, path, content, against)); // judged again by what is opened
        return `wrote ${Buffer.byteLength(content)} bytes to ${path}`;
      },
    ),
    tool('post_message', 'Leaves a message for the user ("root") or another agent on your task tree; it does not wait for a reply.', PostMessageArgs, async ({ to, text }, signal) => {
      const posted = await refusingBrokerErrors(() => session.postMessage(to, text, { signal }));
      if (posted.status === 'refused') throw new ToolRefusal(`the message was refused: ${posted.reason}`);
      return `posted (${posted.id})`;
    }),
  ];
}

function tool<S extends z.ZodType>(name: string, description: string, schema: S, run: (args: z.output<S>, signal: AbortSignal) => Promise<string>): AgentTool {
  const parameters = z.toJSONSchema(schema, { io: 'input' }) as JsonSchemaObject;
  delete parameters['$schema'];
  return {
    name,
    description,
    parameters,
    async run(args, signal) {
      const parsed = schema.safeParse(args);
      if (!parsed.success) throw new ToolRefusal(`bad arguments for ${name}: ${z.prettifyError(parsed.error).replace(/\n/g, '; ')}`);
      return run(parsed.data, signal);
    },
  };
}

/**
 * A broker's refusal (unknown agent, delegation, a refused question, past the call rate) is the
 * model's to read, not the task's end: every session call of a tool goes through it.
 */
async function refusingBrokerErrors<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof BrokerError) throw new ToolRefusal(err.message);
    throw err;
  }
}

/** A refusal of the path (outside the workspace, a symlink…) is the model's to read. */
async function refusingOutside<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    // Some refusals (a file changed while the person decided) say so already.
    if (err instanceof WorkspaceRefusal) throw new ToolRefusal(err.message.endsWith('nothing was written') ? err.message : `${err.message}; nothing was written`);
    throw err;
  }
}

function describeCommand(result: ExecResult, output: string, timeoutMs: number): string {
  const end =
    result.ended === 'timeout'
      ? `timed out after ${timeoutMs} ms and was ended`
      : result.code !== null
        ? `exit code ${result.code}`
        : `ended by ${result.signal ?? 'a signal'}`;
  const cut = result.droppedBytes > 0 ? `\n[… ${result.droppedBytes} more bytes of output were dropped]` : '';
  return output === '' && cut === '' ? `${end}; no output` : `${end}; output:\n${output}${cut}`;
}
