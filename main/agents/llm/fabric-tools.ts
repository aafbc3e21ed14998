import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { BrokerError, type TaskMapper, type WorkerSession } from '../../worker/index.js';
import { ToolRefusal, type AgentTool, type JsonSchemaObject } from './agent-tool.js';
import { diffStat } from './diff-stat.js';
import { runCommand, type CommandResult } from './run-command.js';
import { resolveInWorkspace } from './workspace-path.js';

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
  path: z.string().min(1).describe('the file, relative to the workspace (an absolute path must be inside it); no ".." segments'),
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
      const agents = await session.listAgents({ signal });
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
        const verdict = await session.approve('exec', command, undefined, { signal });
        if (verdict !== 'approved') throw new ToolRefusal(`the user denied running ${JSON.stringify(command)}; it was not run`);
        ctx.map.step(`running ${command}`);
        const result = await runCommand(command, { cwd: ctx.workspace, env: ctx.commandEnv, timeoutMs: ctx.execTimeoutMs, signal });
        return describeCommand(result, ctx.execTimeoutMs);
      },
    ),
    tool(
      'write_file',
      'Writes a file inside your workspace (creating its folders) once the user approves it. Replaces the whole file.',
      WriteFileArgs,
      async ({ path, content }, signal) => {
        const target = await resolveInWorkspace(ctx.workspace, path);
        const before = target.exists ? await readFile(target.path, 'utf8').catch(() => undefined) : undefined;
        const verdict = await session.approve('write', target.path, diffStat(before, content), { signal });
        if (verdict !== 'approved') throw new ToolRefusal(`the user denied writing ${target.relative}; it was not written`);
        await mkdir(dirname(target.path), { recursive: true });
        await writeFile(target.path, content);
        return `wrote ${Buffer.byteLength(content)} bytes to ${target.relative}`;
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

/** A broker's refusal (unknown agent, delegation, a refused question) is the model's to read, not the task's end. */
async function refusingBrokerErrors<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof BrokerError) throw new ToolRefusal(err.message);
    throw err;
  }
}

function describeCommand(result: CommandResult, timeoutMs: number): string {
  const end = result.timedOut
    ? `timed out after ${timeoutMs} ms and was ended`
    : result.exitCode !== null
      ? `exit code ${result.exitCode}`
      : `ended by ${result.signal ?? 'a signal'}`;
  return result.output === '' ? `${end}; no output` : `${end}; output:\n${result.output}`;
}
