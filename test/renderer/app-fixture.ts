// What the renderer's browser tests share: a real gateway on a real socket, real plugin modules
// (the WebAssembly fixtures, with their tools), a broker with the bundled agents (local-coder and
// local-reviewer: `chatty-gateway worker`, the scripted agent, each task in a git worktree of a
// fresh repository), the real bridge host, and the app page and preload as the build makes them,
// served with the app: protocol's own headers (its CSP among them), in Debian Chromium.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmdirSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { bundledAgents } from '../../main/agents/bundled.js';
import { BridgeHost } from '../../main/app/bridge/bridge-host.js';
import type { Runner } from '../../main/broker/index.js';
import type { ModuleRegistryOptions } from '../../main/plugins/index.js';
import { LocalRunner } from '../../main/broker/runners/index.js';
import type { PluginGrants } from '../../main/plugins/grants/index.js';
import { AGENT, isAlive } from '../broker/helpers.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { bindWindow, launchChromium, serveDemo } from '../helpers/renderer-page.js';
import { loadFixtures, type LoadedFixtures } from '../helpers/wasm-fixtures.js';

const UPDATE_SCREENSHOTS = process.env['CHATTY_UPDATE_SCREENSHOTS'] === '1';
/**
 * Where the browser tests write their screenshots: a temporary folder of this test process, or
 * `docs/screenshots/` (the ones the README shows) when CHATTY_UPDATE_SCREENSHOTS=1, so a test run
 * leaves the tree clean. Made by `startApp`, not at import (each import left an empty folder in
 * /tmp), and removed when the process exits if no screenshot was written to it.
 */
export const SCREENSHOTS = UPDATE_SCREENSHOTS ? join(REPO_ROOT, 'docs', 'screenshots') : join(tmpdir(), `chatty-screenshots-${process.pid}`);
const removeIfEmpty = (): void => {
  try {
    rmdirSync(SCREENSHOTS); // refused (ENOTEMPTY) when a screenshot is in it: kept to look at
  } catch {
    // kept
  }
};

export interface AppFixture {
  browser: Browser;
  gw: RunningGateway;
  host: BridgeHost;
  /** The plugins' grant desk (the fixture registry's `grants`), answered by the host: a test puts a capability request to it. */
  grants: PluginGrants;
  pageUrl: string;
  base: string;
  /** A private scratch directory (the repository the agents work in is under it). */
  scratch: string;
  /** Pids of every worker started so far. */
  pids(): number[];
  alive(): number[];
  /**
   * A new window (800×600 unless `viewport` says) on the app page, bound to the host, loaded and
   * ready; `clipboard` grants it the clipboard (reading it back too); `colorScheme` and
   * `timezoneId` set the reader's preference and time zone.
   */
  open(options?: OpenOptions): Promise<Page>;
  /** The response headers the window's page came with. */
  headers(page: Page): Record<string, string>;
  /** What went wrong in a window so far: uncaught errors, console errors (a CSP violation is one). */
  problems(page: Page): string[];
  close(): Promise<void>;
}

/** Every child a runner started, by pid. */
function observed(runner: Runner, pids: number[]): Runner {
  return {
    async start(request) {
      const worker = await runner.start(request);
      if (worker.child.pid !== undefined) pids.push(worker.child.pid);
      return worker;
    },
  };
}

export interface OpenOptions {
  clipboard?: boolean;
  viewport?: { width: number; height: number };
  colorScheme?: 'light' | 'dark';
  timezoneId?: string;
}

export interface AppOptions {
  /** The plugin registry's options (its `grants`, say). */
  registry?: ModuleRegistryOptions;
  /**
   * Also publish `planner`: the broker tests' scriptable agent, whose task text is a JSON plan
   * (`plan()` of test/broker/helpers.ts); it can ask several questions at once.
   */
  planner?: boolean;
}

/** A fresh git repository `<scratch>/repo` on `main` with one empty commit; returns its real path (the agents' workspace root). */
export function gitRepo(scratch: string): string {
  const repo = join(scratch, 'repo');
  mkdirSync(repo);
  const git = (...args: string[]): void => void execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], { cwd: repo, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('commit', '-q', '--allow-empty', '-m', 'start');
  return realpathSync(repo);
}

export async function startApp(options: AppOptions = {}): Promise<AppFixture> {
  const scratch = mkdtempSync(join(tmpdir(), 'chatty-renderer-'));
  const workspaceRoot = gitRepo(scratch);
  const plugins: LoadedFixtures = await loadFixtures([
    { name: 'text-tools', kind: 'echo' },
    { name: 'slow-tools', kind: 'slow' },
  ], options.registry);
  const gw = await startGateway(plugins.registry, { broker: { root: { workspaceRoot, baseBranch: 'main' }, cancelGraceMs: 1_000, log: () => {} } });
  const pids: number[] = [];
  for (const agent of bundledAgents({ workspace: { kind: 'git', workspaceRoot, baseBranch: 'main' }, reapGraceMs: 1_000 })) {
    gw.gateway.withVirtualAgent(agent.name, observed(agent.runner, pids), agent.card);
  }
  if (options.planner) gw.gateway.withVirtualAgent('planner', observed(new LocalRunner({ command: process.execPath, args: ['--import', 'tsx', AGENT], reapGraceMs: 1_000 }), pids));
  const demo: { base: string; server: Server } = await serveDemo({
    '/renderer-demo/framed.html': '<!doctype html><iframe src="/renderer-demo/inner.html"></iframe>',
    '/renderer-demo/inner.html': '<!doctype html><p>inner</p>',
    '/renderer-demo/axe.js': readFileSync(join(REPO_ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8'),
  });
  const pageUrl = `${demo.base}/renderer-demo/index.html`;
  const host = new BridgeHost(gw.gateway, { socketPath: gw.socketPath, tokenPath: gw.tokenPath }, (url) => url === pageUrl, { grants: plugins.registry.grants });
  const browser = await launchChromium();
  if (!UPDATE_SCREENSHOTS && !existsSync(SCREENSHOTS)) process.once('exit', removeIfEmpty);
  mkdirSync(SCREENSHOTS, { recursive: true, mode: 0o700 }); // as mkdtemp made it: the screenshots are the tester's
  const problems = new WeakMap<Page, string[]>();
  const headers = new WeakMap<Page, Record<string, string>>();
  return {
    browser,
    gw,
    host,
    grants: plugins.registry.grants,
    pageUrl,
    base: demo.base,
    scratch,
    pids: () => [...pids],
    alive: () => pids.filter(isAlive),
    problems: (page) => problems.get(page) ?? [],
    headers: (page) => headers.get(page) ?? {},
    async open(options = {}) {
      const page = await browser.newPage({
        viewport: options.viewport ?? { width: 800, height: 600 },
        ...(options.clipboard ? { permissions: ['clipboard-read', 'clipboard-write'] } : {}),
        ...(options.colorScheme ? { colorScheme: options.colorScheme } : {}),
        ...(options.timezoneId ? { timezoneId: options.timezoneId } : {}),
      });
      const seen: string[] = [];
      problems.set(page, seen);
      page.on('pageerror', (err) => seen.push(`error: ${err.message}`));
      page.on('console', (message) => {
        if (message.type() === 'error' || message.type() === 'warning') seen.push(`${message.type()}: ${message.text()}`);
      });
      await bindWindow(page, host);
      const response = await page.goto(pageUrl);
      headers.set(page, response?.headers() ?? {});
      await page.waitForSelector('body[data-ready="true"]');
      return page;
    },
    async close() {
      await browser.close();
      host.close();
      demo.server.close();
      await gw.close();
      await plugins.close();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** axe-core over the page as it is now (loaded from the page's own origin, as its CSP allows): the serious and critical violations. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  const loaded = await page.evaluate(() => typeof (window as unknown as { axe?: unknown }).axe !== 'undefined');
  if (!loaded) await page.addScriptTag({ url: '/renderer-demo/axe.js' });
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: Document, opts: object): Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => JSON.stringify(n.target)) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
