/**
 * A kept-alive connection between requests that sends only empty lines: Node's parser skips a
 * CRLF between messages without beginning one, so the header timeout never starts, and each line
 * resets the keep-alive timeout (an inactivity timer). Before, such a connection, with or without
 * the token, was held for as long as its client liked: the header timeout ended nothing (the
 * known limit "connections held past the cap were seen not closed by the header timeout"). Now a
 * connection with no request on it for longer than a kept-alive client can wait plus the header
 * timeout, and no byte written to it since, is closed.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { RawConnection } from '../helpers/http.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';

const HEADERS_TIMEOUT_MS = 2_000;
let gw: RunningGateway;
before(async () => {
  gw = await startGateway({ list: () => [] }, { connectionLimits: { headersTimeoutMs: HEADERS_TIMEOUT_MS } });
});
after(() => gw.close());

/** Node's default keep-alive timeout, which the gateway keeps. */
const KEEP_ALIVE_MS = 5_000;
/** Far past when it must be closed (keep-alive, then headers, then a look): a hang guard, not a timing. */
const BOUND_MS = (KEEP_ALIVE_MS + HEADERS_TIMEOUT_MS) * 3;

async function answeredThenEmptyLines(auth: string): Promise<{ closedAfterMs: number | undefined }> {
  const conn = await RawConnection.open(gw.socketPath);
  conn.socket.on('error', () => {});
  await conn.write(`GET / HTTP/1.1\r\nHost: localhost\r\n${auth}\r\n`);
  await conn.readResponse();
  const answeredAt = performance.now();
  const lines = setInterval(() => conn.socket.write('\r\n'), 300);
  try {
    while (!conn.isClosed && performance.now() - answeredAt < BOUND_MS) await new Promise((resolve) => setTimeout(resolve, 50));
    return { closedAfterMs: conn.isClosed ? performance.now() - answeredAt : undefined };
  } finally {
    clearInterval(lines);
    conn.close();
  }
}

test('a token holder\'s kept-alive connection sending only empty lines between requests is closed', { timeout: 180_000 }, async () => {
  const { closedAfterMs } = await answeredThenEmptyLines(`Authorization: ${gw.auth.authorization}\r\n`);
  // Before: still open after 21 s.
  assert.notEqual(closedAfterMs, undefined, `still open ${BOUND_MS} ms after its answer`);
});

test('a connection refused 401 sending only empty lines afterwards is closed', { timeout: 180_000 }, async () => {
  const { closedAfterMs } = await answeredThenEmptyLines('');
  assert.notEqual(closedAfterMs, undefined, `still open ${BOUND_MS} ms after its answer`);
});

test('a kept-alive client that waits, then sends its next request slowly within the header timeout, is answered', { timeout: 180_000 }, async () => {
  const conn = await RawConnection.open(gw.socketPath);
  try {
    const auth = `Authorization: ${gw.auth.authorization}\r\n`;
    await conn.write(`GET / HTTP/1.1\r\nHost: localhost\r\n${auth}\r\n`);
    assert.equal((await conn.readResponse()).status, 200);
    // Most of the keep-alive timeout idle, then the next head a line at a time over most of the header timeout.
    await new Promise((resolve) => setTimeout(resolve, KEEP_ALIVE_MS - 1_500));
    const lines = ['GET / HTTP/1.1\r\n', 'Host: localhost\r\n', auth, '\r\n'];
    for (const line of lines) {
      await conn.write(line);
      await new Promise((resolve) => setTimeout(resolve, (HEADERS_TIMEOUT_MS - 800) / lines.length));
    }
    assert.equal((await conn.readResponse()).status, 200);
  } finally {
    conn.close();
  }
});
