/**
 * A raw long-lived participant for test/broker/hostile-deaf-callee.test.ts: says hello, reads its
 * answer, then never reads again (and never writes), so every task.run the broker sends it past
 * the socket's buffers and the outbound queue's room waits in the broker.
 *
 * It reads through `onread` (as flood.ts does): returning false stops the reading in libuv at once.
 */
import { Socket, type ConnectOpts, type SocketConstructorOpts } from 'node:net';

const options: SocketConstructorOpts & ConnectOpts = {
  fd: 3,
  readable: true,
  writable: true,
  onread: { buffer: Buffer.alloc(64 * 1024), callback: () => false }, // the hello's answer is the last thing read
};
const socket = new Socket(options);
socket.write(JSON.stringify({ v: 3, id: 1, method: 'session.hello', params: { card: { name: 'sleepy', description: 'stops reading', version: '1.0.0', skills: [] } } }) + '\n');
setInterval(() => {}, 1 << 30); // lives until it is ended
