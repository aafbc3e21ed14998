// The app's menu template (Electron-free): no way to reload the page from it on any platform.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { MenuItemConstructorOptions } from 'electron';
import { appMenuTemplate } from '../../main/app/app-menu.js';

function roles(items: MenuItemConstructorOptions[]): string[] {
  return items.flatMap((item) => [...(item.role ? [item.role] : []), ...(Array.isArray(item.submenu) ? roles(item.submenu) : [])]);
}

test('no Reload, Force Reload or View role (which holds both), on Linux and macOS, with DevTools or without', () => {
  for (const platform of ['linux', 'darwin'] as const) {
    for (const devTools of [true, false]) {
      const found = roles(appMenuTemplate({ platform, devTools }));
      assert.deepEqual(found.filter((r) => ['reload', 'forceReload', 'viewMenu'].includes(r)), [], `${platform} devTools=${devTools}`);
      assert.ok(found.includes('editMenu') && found.includes('zoomIn') && found.includes('windowMenu'));
      assert.equal(found.includes('toggleDevTools'), devTools);
    }
  }
});

test('macOS gets its app menu (About, Hide, Quit) first; Linux does not', () => {
  assert.equal(appMenuTemplate({ platform: 'darwin', devTools: false })[0]?.role, 'appMenu');
  assert.equal(appMenuTemplate({ platform: 'linux', devTools: false })[0]?.role, 'fileMenu');
});
