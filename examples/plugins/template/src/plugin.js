// A chatty:plugin@0.3.0 plugin. `npx chatty-gateway plugin build .` turns this file into plugin.wasm.
//
// Host capabilities are imported from `chatty:plugin/<capability>@0.3.0` (see wit/plugin.wit).
// `console.log` and `log` both write the host's log; `Date.now()` and `Math.random()` work; `fetch`
// reaches only what module.toml's [network] allow list names (nothing without one), and files
// only through `chatty:plugin/file` below the manifest's [files] root.
import { log } from 'chatty:plugin/logging@0.3.0';
import { get } from 'chatty:plugin/config@0.3.0';

const NAME = 'template';

/** Your tools: a description, a JSON Schema for the arguments, and a function returning text. */
const TOOLS = {
  greet: {
    description: 'Greets someone by name.',
    schema: {
      type: 'object',
      properties: { name: { type: 'string', description: 'Who to greet' } },
      required: ['name'],
    },
    run(args) {
      if (typeof args.name !== 'string' || args.name === '') throw invalid('`name` must be a non-empty string');
      const greeting = get('greeting') ?? 'Hello';
      log('info', `greeting ${args.name}`);
      return `${greeting}, ${args.name}!`;
    },
  },
};

function invalid(message) {
  return { kind: 'invalid-arguments', message };
}

export const plugin = {
  metadata() {
    return {
      name: NAME,
      version: '0.1.0',
      description: 'A starting point: one tool that says hello.',
      requestedCapabilities: ['logging', 'config'],
      configKeys: [{ name: 'greeting', description: 'The word to greet with', required: false }],
    };
  },

  listTools() {
    return Object.entries(TOOLS).map(([name, tool]) => ({
      name,
      description: tool.description,
      parametersSchema: JSON.stringify(tool.schema),
    }));
  },

  // Returns { content } for a result. Throw { kind, message } for a tool-error, where kind is
  // 'unknown-tool' | 'invalid-arguments' | 'denied' | 'failed'; anything else thrown (an Error, a
  // string) reaches the caller as a 'failed' tool-error with its message.
  // `async`, so a tool's `run` may be async too (every tool that uses `fetch` is): it is awaited.
  async invokeTool(call) {
    const tool = TOOLS[call.name];
    if (!tool) throw { kind: 'unknown-tool', message: `no tool named ${call.name}` };
    let args;
    try {
      args = JSON.parse(call.argumentsJson);
    } catch {
      throw invalid('arguments are not JSON');
    }
    if (args === null || typeof args !== 'object' || Array.isArray(args)) throw invalid('arguments must be a JSON object');
    return { content: await tool.run(args) };
  },
};
