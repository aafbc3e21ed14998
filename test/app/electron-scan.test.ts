// The Electron security scan (electronegativity) over the project passes, and fails, with exit 1,
// on a tree that turns the renderer's protections off.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { scanElectron } from './electron-scan/scan.js';

const fixture = mkdtempSync(join(tmpdir(), 'chatty-electron-scan-fixture-'));
after(() => rmSync(fixture, { recursive: true, force: true }));

test('the project passes: no HIGH, no MEDIUM but PRELOAD_JS_CHECK, every LOW explained, every file parsed, the preload scanned', async () => {
  const report = await scanElectron();
  assert.deepEqual(report.failures, []);
  assert.deepEqual(report.errors.filter((e) => !e.tolerable), []);
  assert.ok(report.files.includes('preload/index.cts'), 'the preload is scanned (as .ts)');
  assert.ok(report.files.includes('main/app/main.ts') && report.files.includes('renderer-demo/index.html'));
  assert.ok(report.findings.some((f) => f.id === 'PRELOAD_JS_CHECK' && f.file === 'main/app/window-options.ts'), 'the scan sees the window options');
  assert.ok(!report.findings.some((f) => f.severity === 'HIGH'));
});

test('a window without isolation or sandbox, no navigation or permission handlers and a page without CSP fail the scan; the script exits 1', async () => {
  for (const dir of ['main/app', 'preload', 'renderer-demo', 'docs']) mkdirSync(join(fixture, dir), { recursive: true });
  writeFileSync(
    join(fixture, 'main/app/main.ts'),
    "import { BrowserWindow } from 'electron';\nexport const w: BrowserWindow = new BrowserWindow({ webPreferences: { contextIsolation: false, nodeIntegration: true, sandbox: false } });\n",
  );
  writeFileSync(join(fixture, 'preload/index.cts'), "import electron = require('electron');\nvoid electron;\n");
  writeFileSync(join(fixture, 'renderer-demo/index.html'), '<!doctype html><html><head><title>t</title></head><body></body></html>\n');
  writeFileSync(join(fixture, 'docs/security.md'), '# Security\n');
  const report = await scanElectron(fixture);
  assert.ok(report.failures.some((f) => f.startsWith('HIGH CONTEXT_ISOLATION_JS_CHECK at main/app/main.ts')), report.failures.join('\n'));
  // Without our handlers and the page's CSP, the tool's global checks say so too.
  assert.ok(report.failures.some((f) => f.startsWith('HIGH LIMIT_NAVIGATION_GLOBAL_CHECK')), report.failures.join('\n'));
  assert.ok(report.failures.some((f) => f.startsWith('MEDIUM PERMISSION_REQUEST_HANDLER_GLOBAL_CHECK')), report.failures.join('\n'));
  assert.ok(report.failures.some((f) => f.startsWith('MEDIUM CSP_GLOBAL_CHECK')), report.failures.join('\n'));
  assert.ok(report.failures.some((f) => f.startsWith('MEDIUM SANDBOX_JS_CHECK')), report.failures.join('\n'));

  const script = fileURLToPath(new URL('./electron-scan/scan.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, fixture], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(code, 1);
  assert.match(stdout, /FAIL {2}HIGH CONTEXT_ISOLATION_JS_CHECK/);
  assert.match(stdout, /electron scan: FAILED/);
});
