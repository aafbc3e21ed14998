import { surfacesOf, type CallableModule, type ModuleDirectory, type ServedModule } from '../../gateway/modules.js';
import { ModuleListSchema, ModuleSummarySchema, type ModuleChangeView, type ModuleList, type ModuleSummary, type PendingModuleView } from './contract.js';

/**
 * How long one module's `listTools()` may take before the list goes without its tools: a module
 * that never answers (an embedder's, or a guest asked while a long call holds its lock) must not
 * hold back the list for every other module, nor every later push.
 */
export const LIST_TOOLS_TIMEOUT_MS = 2_000;

/** The served modules (`registry.list()`) with their tools (each one's `listTools()`, answered from what its load recorded). */
export function moduleSummaries(registry: ModuleDirectory, listToolsTimeoutMs = LIST_TOOLS_TIMEOUT_MS): Promise<ModuleSummary[]> {
  return Promise.all(
    registry.list().map(async (m): Promise<ModuleSummary> => {
      const summary: ModuleSummary = { name: m.name, version: m.version, description: m.description, surfaces: surfacesOf(m), tools: [] };
      const callable = registry.get?.(m.name) ?? (isCallable(m) ? m : undefined);
      if (!callable) return summary;
      try {
        const tools = (await within(listToolsTimeoutMs, m.name, () => callable.listTools())).map((t) => ({ name: t.name, description: t.description }));
        // Checked here, per module: one module's odd answer must not fail the whole list's schema check.
        const checked = ModuleSummarySchema.shape.tools.safeParse(tools);
        if (checked.success) summary.tools = checked.data;
        else summary.toolsError = `module '${m.name}' listed tools that cannot be shown: ${checked.error.issues.map((i) => `tools[${i.path.join('].')}: ${i.message}`).join('; ')}`;
      } catch (err) {
        summary.toolsError = (err as Error)?.message ?? String(err);
      }
      return summary;
    }),
  );
}

/** The modules announced but not served (`registry.pending()`): building, failed, not granted. */
export function pendingModules(registry: ModuleDirectory): PendingModuleView[] {
  return (registry.pending?.() ?? []).map((p) => ({ name: p.name, state: p.state, ...(p.reason !== undefined ? { reason: p.reason } : {}) }));
}

/**
 * The plugin list, pushed to the window after each change the registry reports (`onChange`): the
 * whole list, served and pending, so the page only replaces what it shows. Changes that come while
 * a list is being made are pushed together in the next one, so lists go out in order and the last
 * one is the registry as it is. Each list is checked against `ModuleListSchema` before it goes.
 */
export class ModuleListFeed {
  private waiting: ModuleChangeView[] = [];
  private pushing = false;

  constructor(
    private readonly registry: ModuleDirectory,
    private readonly push: (list: ModuleList) => void,
    private readonly log: (line: string) => void,
    private readonly listToolsTimeoutMs = LIST_TOOLS_TIMEOUT_MS,
  ) {}

  /** Starts hearing the registry (a directory without `onChange` never changes); returns the stop function. */
  start(): () => void {
    return this.registry.onChange?.((change) => this.changed({ name: change.name, change: change.change })) ?? (() => {});
  }

  private changed(change: ModuleChangeView): void {
    this.waiting.push(change);
    if (!this.pushing) void this.drain();
  }

  private async drain(): Promise<void> {
    this.pushing = true;
    try {
      while (this.waiting.length > 0) {
        const changes = this.waiting.splice(0);
        const list = ModuleListSchema.safeParse({ changes, modules: await moduleSummaries(this.registry, this.listToolsTimeoutMs), pending: pendingModules(this.registry) });
        if (list.success) this.push(list.data);
        else this.log(`bridge: the plugin list was not sent: ${list.error.message}`);
      }
    } catch (err) {
      this.log(`bridge: the plugin list was not sent: ${(err as Error)?.message ?? String(err)}`);
    } finally {
      this.pushing = false;
    }
  }
}

/** `list()`'s answer, or a rejection naming the module once `ms` have passed without one. */
async function within<T>(ms: number, name: string, list: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`module '${name}' did not list its tools within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([list(), late]);
  } finally {
    clearTimeout(timer);
  }
}

function isCallable(m: ServedModule): m is CallableModule {
  return typeof (m as Partial<CallableModule>).listTools === 'function';
}
