/**
 * A raw participant for the broker tests: says hello, then sends calls that are refused
 * (`mailbox.post` to nobody) and never reads their answers, so the broker's outbound queue to it
 * fills up and stays full.
 *
 * It reads through `onread`, not 'data': returning false stops the reading in libuv at once. A
 * paused 'data' stream still reads until its buffer reaches the high-water mark, 16 KiB on Node 20
 * but 64 KiB on Node 22, which took in so many answers after the queue first backed up that the
 * waiting ones found room within a second.
 */
import { Socket, type ConnectOpts, type SocketConstructorOpts } from 'node:net';

const frame = (id: number, method: string, params: unknown): string => JSON.stringify({ v: 3, id, method, params }) + '\n';
// The constructor takes `onread` too (net.Socket's own code); @types/node lists it for connect only.
const options: SocketConstructorOpts & ConnectOpts = {
  fd: 3,
  readable: true,
  writable: true,
  onread: {
    buffer: Buffer.alloc(64 * 1024),
    callback: () => {
      // The hello's answer is the last thing read.
      let calls = '';
      for (let id = 2; id < 6000; id++) calls += frame(id, 'mailbox.post', { to: 'nobody', text: 'x' });
      socket.write(calls);
      return false;
    },
  },
};
const socket = new Socket(options);
socket.write(frame(1, 'session.hello', { card: { name: 'flood', description: 'never reads', version: '1.0.0', skills: [] } }));
setInterval(() => {}, 1 << 30); // lives until it is ended
