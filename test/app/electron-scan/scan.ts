// The Electron security scan: @doyensec/electronegativity over main/, preload/ and renderer-demo/,
// judged by policy.ts. `npm run scan:electron` prints the report and exits 1 when the scan fails
// (`scan.ts <root>` scans another tree laid out the same way);
// test/app/electron-scan.test.ts runs it within `npm test`, so CI catches a regression.
//
// The tool reads JavaScript and TypeScript itself (`.ts` through Babel's TypeScript parser), so the
// sources are scanned, not the build: nothing needs building first and findings name our files.
// It does not know the `.cts`/`.mts` extensions (it would skip preload/index.cts), so the sources
// are copied to a temporary folder with those renamed `.ts`; findings are reported under the
// real names. It runs offline (electronegativity-hook.cjs): the release-list check, the one
// that needs the network, is excluded; the Electron version is the installed one's.
import { cpSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { explainedLowFindings, judge, type Finding, type ParseError, type Verdict } from './policy.js';

const require = createRequire(import.meta.url);
export const projectRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** What is scanned, relative to the project root. */
export const SCANNED = ['main', 'preload', 'renderer-demo'] as const;
/** Checks left out: this one fetches Electron's release list from GitHub (Electron's version is kept current by its dependency, not by a scan). */
export const EXCLUDED_CHECKS = ['AvailableSecurityFixesGlobalCheck'] as const;
/** Extensions the tool parses; the others are copied under a name it knows. */
const RENAMED: Readonly<Record<string, string>> = { '.cts': '.ts', '.mts': '.ts', '.cjs': '.js', '.mjs': '.js' };
const READ = new Set(['.ts', '.tsx', '.js', '.jsx', '.html', '.htm', '.json', ...Object.keys(RENAMED)]);

const IssueSchema = z.object({
  id: z.string(),
  severity: z.object({ name: z.enum(['HIGH', 'MEDIUM', 'LOW', 'INFORMATIONAL']) }),
  confidence: z.object({ name: z.string() }),
  file: z.string(),
  location: z.object({ line: z.number(), column: z.number() }).optional(),
  description: z.string().optional(),
  manualReview: z.boolean().optional(),
});
const ResultSchema = z.object({
  globalChecks: z.number(),
  atomicChecks: z.number(),
  errors: z.array(z.object({ file: z.string(), message: z.string(), tolerable: z.boolean() })),
  issues: z.array(IssueSchema),
});

export interface ScanReport extends Verdict {
  findings: Finding[];
  errors: ParseError[];
  /** Files the tool was given, by their names in the repository. */
  files: string[];
  checks: number;
  electronVersion: string;
}

/** Copies the scanned folders to `stage`, renaming what the tool would not read; returns staged name → real name. */
function stageSources(root: string, stage: string): Map<string, string> {
  const names = new Map<string, string>();
  for (const dir of SCANNED) {
    cpSync(join(root, dir), join(stage, dir), { recursive: true, filter: (src) => !src.split(sep).includes('node_modules') });
  }
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(path);
        continue;
      }
      const ext = extname(entry.name);
      if (!READ.has(ext)) {
        rmSync(path);
        continue;
      }
      const real = relative(stage, path).split(sep).join('/');
      const renamed = RENAMED[ext];
      const staged = renamed === undefined ? path : `${path.slice(0, -ext.length)}${renamed}`;
      if (staged !== path) renameSync(path, staged);
      names.set(relative(stage, staged).split(sep).join('/'), real);
    }
  };
  walk(stage);
  return names;
}

/** Runs the scan over the project at `root` and judges it. */
export async function scanElectron(root: string = projectRoot): Promise<ScanReport> {
  require('./electronegativity-hook.cjs');
  const run: unknown = require('@doyensec/electronegativity/dist/runner.js');
  if (typeof run !== 'function') throw new Error('electron scan: @doyensec/electronegativity/dist/runner.js is not the runner this script knows');
  const electronVersion = z.object({ version: z.string() }).parse(JSON.parse(readFileSync(require.resolve('electron/package.json'), 'utf8'))).version;
  const stage = mkdtempSync(join(tmpdir(), 'chatty-electron-scan-'));
  try {
    const names = stageSources(root, stage);
    const realName = (file: string): string => names.get(file.split(sep).join('/')) ?? file;
    const result = ResultSchema.parse(
      await (run as (options: object, forCli: boolean) => Promise<unknown>)(
        {
          input: stage,
          isRelative: true,
          electronVersionOverride: electronVersion,
          excludeFromScan: EXCLUDED_CHECKS.map((c) => c.toLowerCase()),
          customScan: [],
        },
        false,
      ),
    );
    const findings: Finding[] = result.issues.map((issue) => ({
      id: issue.id,
      severity: issue.severity.name,
      confidence: issue.confidence.name,
      file: realName(issue.file),
      line: issue.location?.line ?? 0,
      column: issue.location?.column ?? 0,
      description: issue.description ?? '',
      manualReview: issue.manualReview ?? false,
    }));
    const errors: ParseError[] = result.errors.map((e) => ({ ...e, file: realName(relative(stage, e.file)) }));
    const doc = readFileSync(join(root, 'docs', 'security.md'), 'utf8');
    const verdict = judge(findings, errors, explainedLowFindings(doc));
    return { ...verdict, findings, errors, files: [...names.values()].sort(), checks: result.globalChecks + result.atomicChecks, electronVersion };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** `scan.ts [root]`: the project by default; another root (a test's fixture) when given. */
async function main(root: string | undefined): Promise<number> {
  const report = await scanElectron(root);
  const out = process.stdout;
  out.write(`electronegativity: ${report.checks} checks over ${report.files.length} files in ${SCANNED.join('/, ')}/ (Electron ${report.electronVersion})\n`);
  for (const note of report.notes) out.write(`  ok    ${note}\n`);
  for (const failure of report.failures) out.write(`  FAIL  ${failure}\n`);
  out.write(report.failures.length === 0 ? 'electron scan: passed\n' : `electron scan: FAILED (${report.failures.length})\n`);
  return report.failures.length === 0 ? 0 : 1;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv[2]).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`electron scan: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
