import { RawConnection } from '../helpers/http.js';
import type { RunningGateway } from '../helpers/gateway.js';

/** Sends a request head written by hand (request line and headers, each ending CRLF) with the token, on its own connection. */
export async function sendHead(gw: RunningGateway, head: string): Promise<{ status: number; body: string }> {
  const conn = await RawConnection.open(gw.socketPath);
  try {
    await conn.write(`${head}Authorization: ${gw.auth.authorization}\r\n\r\n`);
    return await conn.readResponse();
  } finally {
    conn.close();
  }
}
