// `npm start`'s check, before it builds and launches the desktop app: each thing the launch needs
// that is missing is said in a sentence with what to do, and the launch does not begin (exit 1),
// instead of Electron's own failure far into it (a stack trace from its downloader on an old
// Node, "Missing X server or $DISPLAY" after the build). Importing the package never checks any
// of this: only this script, which only `npm start` runs.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Used when the installed electron package does not say (or is missing): Electron 45's floor. */
const FALLBACK_NODE = '22.12.0';

export interface DesktopSetting {
  /** `process.versions.node`. */
  nodeVersion: string;
  /** The installed `electron` package's package.json, or undefined when it is not installed. */
  electron: { version: string; engines?: { node?: string } } | undefined;
  /** Whether Electron's binary has been downloaded already (the first launch fetches it otherwise). */
  binaryReady: boolean;
  platform: NodeJS.Platform;
  env: NodeJS.ProcessEnv;
}

/** The lowest Node a `>= x.y.z` range allows. */
function floorOf(range: string | undefined): string {
  const match = />=\s*v?(\d+\.\d+\.\d+)/.exec(range ?? '');
  return match?.[1] ?? FALLBACK_NODE;
}

function atLeast(version: string, floor: string): boolean {
  const parts = (v: string): number[] => v.split('.').map((n) => Number.parseInt(n, 10) || 0);
  const [a, b] = [parts(version), parts(floor)];
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
}

/** What stops `npm start` (`problems`, each a sentence saying what to do) and what it should know (`notes`). */
export function desktopPreflight(setting: DesktopSetting): { problems: string[]; notes: string[] } {
  const problems: string[] = [];
  const notes: string[] = [];
  const floor = floorOf(setting.electron?.engines?.node);
  if (!atLeast(setting.nodeVersion, floor)) {
    const why = setting.electron ? ` (Electron ${setting.electron.version}'s launcher, node_modules/electron, fetches and starts its binary with it)` : '';
    problems.push(
      `the desktop app needs Node >= ${floor}${why}; this is Node ${setting.nodeVersion}. ` +
        'Use Node 22.12 or later for npm start (nvm install 22, or your system\'s package). ' +
        'The headless gateway and the tests run on Node >= 20: npx chatty-gateway serve.',
    );
  }
  if (!setting.electron) {
    problems.push('the desktop app needs the electron package, a devDependency of this project: run npm install (without --omit=dev) in the checkout.');
  }
  if (setting.platform === 'linux' && !setting.env['DISPLAY'] && !setting.env['WAYLAND_DISPLAY']) {
    problems.push('there is no display (neither DISPLAY nor WAYLAND_DISPLAY is set): run it under a virtual one, xvfb-run npm start, or use the headless npx chatty-gateway serve.');
  }
  if (setting.electron && !setting.binaryReady) {
    notes.push("Electron's binary is not downloaded yet: this first launch fetches it (about 100 MB) from GitHub, or from ELECTRON_MIRROR when set.");
  }
  return { problems, notes };
}

/** The setting of the checkout at `root`, on this process's Node. */
export function currentSetting(root: string): DesktopSetting {
  let electron: DesktopSetting['electron'];
  let binaryReady = false;
  try {
    const manifest = createRequire(join(root, 'package.json')).resolve('electron/package.json');
    electron = JSON.parse(readFileSync(manifest, 'utf8')) as NonNullable<DesktopSetting['electron']>;
    const pathFile = join(dirname(manifest), 'path.txt');
    binaryReady = existsSync(pathFile) && existsSync(join(dirname(manifest), 'dist', readFileSync(pathFile, 'utf8')));
  } catch {
    electron = undefined;
  }
  return { nodeVersion: process.versions.node, electron, binaryReady, platform: process.platform, env: process.env };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { problems, notes } = desktopPreflight(currentSetting(join(dirname(fileURLToPath(import.meta.url)), '..')));
  for (const problem of problems) console.error(`npm start: ${problem}`);
  if (problems.length > 0) process.exit(1);
  for (const note of notes) console.error(`npm start: ${note}`);
}
