// A Sentinel-mode connection survives a +switch-master that arrives while it is already asking a Sentinel for the new
// primary (ioredis then ended the client for good: every later command failed with "Connection is closed."). The
// Sentinel is a small RESP server of the test's own, so that the test holds its answer until the message is out.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createServer, type Server, type Socket } from "node:net";
import { createRedis } from "../../../src/journal/index.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import { waitFor } from "../actors/harness.ts";

const NAME = "primary";

/** The commands in a buffer of RESP arrays (what clients send), and the bytes left over. */
function parseCommands(buffer: string): { commands: string[][]; rest: string } {
  const commands: string[][] = [];
  let at = 0;
  for (;;) {
    const header = /^\*(\d+)\r\n/.exec(buffer.slice(at));
    if (!header) break;
    let cursor = at + header[0].length;
    const args: string[] = [];
    for (let i = 0; i < Number(header[1]); i++) {
      const bulk = /^\$(\d+)\r\n/.exec(buffer.slice(cursor));
      if (!bulk || buffer.length < cursor + bulk[0].length + Number(bulk[1]) + 2)
        return { commands, rest: buffer.slice(at) };
      cursor += bulk[0].length;
      args.push(buffer.slice(cursor, cursor + Number(bulk[1])));
      cursor += Number(bulk[1]) + 2;
    }
    commands.push(args);
    at = cursor;
  }
  return { commands, rest: buffer.slice(at) };
}

const bulk = (text: string) => `$${Buffer.byteLength(text)}\r\n${text}\r\n`;

/** A Sentinel that names `primaryPort` as the primary; `hold` keeps its answers back until `release`. */
class FakeSentinel {
  readonly server: Server;
  private subscribers = new Set<Socket>();
  private held: (() => void)[] = [];
  hold = false;
  asked = 0;

  constructor(private readonly primaryPort: number) {
    this.server = createServer((socket) => {
      let buffer = "";
      socket.on("data", (data) => {
        const parsed = parseCommands(buffer + data.toString("utf8"));
        buffer = parsed.rest;
        for (const command of parsed.commands) this.answer(socket, command);
      });
      socket.on("error", () => {});
      socket.on("close", () => this.subscribers.delete(socket));
    });
  }

  private answer(socket: Socket, [name = "", sub = ""]: string[]): void {
    const command = `${name} ${sub}`.toLowerCase();
    if (command.startsWith("subscribe")) {
      this.subscribers.add(socket);
      socket.write(`*3\r\n${bulk("subscribe")}${bulk(sub)}:1\r\n`);
    } else if (command === "sentinel get-master-addr-by-name") {
      this.asked += 1;
      const reply = () => socket.write(`*2\r\n${bulk("127.0.0.1")}${bulk(String(this.primaryPort))}`);
      if (this.hold) this.held.push(reply);
      else reply();
    } else if (command === "sentinel sentinels") {
      socket.write("*0\r\n");
    } else {
      socket.write("+OK\r\n");
    }
  }

  get subscribed(): number {
    return this.subscribers.size;
  }

  switchMaster(): void {
    const text = `${NAME} 127.0.0.1 ${this.primaryPort} 127.0.0.1 ${this.primaryPort}`;
    for (const socket of this.subscribers)
      socket.write(`*3\r\n${bulk("message")}${bulk("+switch-master")}${bulk(text)}`);
  }

  release(): void {
    this.hold = false;
    for (const reply of this.held.splice(0)) reply();
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    return typeof address === "object" && address ? address.port : 0;
  }
}

let server: TestRedis;
let sentinel: FakeSentinel;
let sentinelPort: number;
beforeAll(async () => {
  server = await startRedis({ own: true });
  sentinel = new FakeSentinel(server.port);
  sentinelPort = await sentinel.listen();
});
afterAll(async () => {
  sentinel.server.close();
  await server.stop();
});

test("regression: +switch-master while the client asks a Sentinel for the primary does not end the client", async () => {
  const config = {
    url: "redis://127.0.0.1:1",
    cluster: [],
    sentinels: [`127.0.0.1:${sentinelPort}`],
    sentinelName: NAME,
  };
  const redis = createRedis(config, "a2a-sentinel-race", { maxRetriesPerRequest: 1 });
  redis.on("error", () => {});
  try {
    expect(await redis.ping()).toBe("PONG");
    // the failover detector of this link listens to the Sentinel
    await waitFor(async () => sentinel.subscribed > 0, 10_000, "the failover detector subscribed");

    // The link dies; the client asks the Sentinel again, which holds its answer while +switch-master goes out.
    sentinel.hold = true;
    const asked = sentinel.asked;
    await server.client().call("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes");
    await waitFor(async () => sentinel.asked > asked, 10_000, "the client asking the Sentinel again");
    sentinel.switchMaster();
    // the old link's detector took it: it closes its own Sentinel connections, and the client's connector with them
    await waitFor(async () => sentinel.subscribed === 0, 10_000, "the failover detector acting");
    sentinel.release();

    const pong = await waitFor(
      async () => (await redis.ping().catch(() => undefined)) ?? false,
      10_000,
      "a PONG again",
    );
    expect(pong).toBe("PONG");
  } finally {
    redis.disconnect();
  }
}, 30_000);
