// The blocking round trip's floor: the same three processes and the same Redis hops as our gateway and actor, with
// nothing else. It answers how much of a round trip's CPU the topology itself costs on this machine (HTTP in, a queue
// entry, an actor woken by XREADGROUP, one script that acks the entry and publishes the result, the gateway woken by
// that message, HTTP out) and so how far the work our processes do on top of it could be cut at most.
//
// Usage: floor-server gateway <port> <redis url> <name> | floor-server worker <redis url> <name>
// Stores nothing but the queue entry (deleted when acked), checks nothing, keeps no task: a measuring stick, not a
// server. It uses what the runtime uses (Bun.serve, ioredis, a Lua script), so its costs are the runtime's own.
import Redis from "ioredis";

const [role = "", ...args] = process.argv.slice(2);

/** XACK + XDEL of the entry and PUBLISH of the answer: the actor's one write per run. */
const FINISH = `
redis.call('XACK', KEYS[1], 'floor', ARGV[1])
redis.call('XDEL', KEYS[1], ARGV[1])
return redis.call('PUBLISH', KEYS[2], ARGV[2])
`;

function keys(name: string) {
  return { queue: `floor:{${name}}:queue`, done: `floor:{${name}}:done` };
}

async function gateway(port: number, url: string, name: string): Promise<void> {
  const { queue, done } = keys(name);
  const commands = new Redis(url);
  const subscriber = new Redis(url);
  const waiting = new Map<string, (text: string) => void>();
  let next = 0;
  subscriber.on("message", (_channel: string, message: string) => {
    const space = message.indexOf(" ");
    const id = message.slice(0, space);
    waiting.get(id)?.(message.slice(space + 1));
    waiting.delete(id);
  });
  await subscriber.subscribe(done);
  Bun.serve({
    port,
    hostname: "127.0.0.1",
    async fetch(request) {
      const body = (await request.json()) as { id: unknown; params: { message: { parts: { text: string }[] } } };
      const id = `${process.pid}-${next++}`;
      const answer = new Promise<string>((resolve) => waiting.set(id, resolve));
      await commands.xadd(queue, "*", "id", id, "text", body.params.message.parts[0]?.text ?? "");
      const text = await answer;
      const task = {
        id,
        status: { state: "TASK_STATE_COMPLETED" },
        artifacts: [{ artifactId: "response-1", parts: [{ text }] }],
      };
      return Response.json({ jsonrpc: "2.0", id: body.id, result: { task } });
    },
  });
  process.stdout.write("floor-server gateway listening\n");
}

async function worker(url: string, name: string): Promise<void> {
  const { queue, done } = keys(name);
  const reader = new Redis(url);
  const commands = new Redis(url);
  commands.defineCommand("finish", { numberOfKeys: 2, lua: FINISH });
  const finish = (entry: string, message: string) =>
    (commands as unknown as { finish(...a: string[]): Promise<number> }).finish(queue, done, entry, message);
  await reader.xgroup("CREATE", queue, "floor", "$", "MKSTREAM").catch(() => {});
  let stopping = false;
  process.on("SIGTERM", () => {
    stopping = true;
    reader.disconnect();
    commands.disconnect();
    process.exit(0);
  });
  process.stdout.write("floor-server worker ready\n");
  while (!stopping) {
    const read = (await reader.xreadgroup("GROUP", "floor", "w", "COUNT", 32, "BLOCK", 1000, "STREAMS", queue, ">")) as
      | [string, [string, string[]][]][]
      | null;
    for (const [entry, fields] of read?.[0]?.[1] ?? []) {
      // fields: id, <id>, text, <text>; the "handler" echoes the text.
      void finish(entry, `${fields[1]} ${fields[3]}`);
    }
  }
}

if (role === "gateway") await gateway(Number(args[0]), args[1] ?? "", args[2] ?? "floor");
else if (role === "worker") await worker(args[0] ?? "", args[1] ?? "floor");
else {
  process.stderr.write("usage: floor-server gateway <port> <redis url> <name> | worker <redis url> <name>\n");
  process.exit(2);
}
