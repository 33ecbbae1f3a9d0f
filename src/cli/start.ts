// `a2a-runtime start`: everything in one process tree for a first run: Redis (REDIS_URL, or an embedded redis-server
// when none answers), the gateway (on loopback unless told otherwise) and the supervisor with its actors, and a demo
// client whose key is printed once, when everything serves. It never touches what another `start` owns.
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import type { Command } from "commander";
import { type Config, publicUrl } from "../config/index.ts";
import type { RunningGateway } from "../gateway/index.ts";
import { ClientRegistry, KeySpace, WorkerRegistry } from "../journal/index.ts";
import { CommandError, EXIT_UNAVAILABLE, isPortInUse, portInUseError } from "./command-error.ts";
import { type CliContext, signingKey } from "./context.ts";
import { type EmbeddedRedis, redisServerOnPath, startEmbeddedRedis } from "./embedded-redis.ts";
import { loadGateway, portNumber } from "./gateway.ts";
import { checkedHandlerModules } from "./handler-modules.ts";
import { isRedisTopology, redisProblem, redisTarget, requireRedis } from "./redis-reach.ts";
import { HANDLERS_OPTION, positiveInteger } from "./work.ts";

/** Where `start` listens unless --host, A2A_SERVER_HOST or the config file says otherwise: this machine only. */
const LOOPBACK = "127.0.0.1";
const WILDCARD_HOSTS = new Set(["0.0.0.0", "::", "[::]"]);
/** How long `start` waits for the first actor's heartbeat before it prints the endpoint anyway (ms). */
const FIRST_BEAT_MS = 15_000;

interface StartOptions {
  port?: number;
  host?: string;
  actors?: number;
  handlers?: string[];
}

/** Whether the config file names server.host itself (then it is used as given). */
function fileSetsHost(file: string | undefined): boolean {
  if (file === undefined) return false;
  const parsed = JSON.parse(readFileSync(file, "utf8")) as { server?: { host?: unknown } };
  return parsed.server?.host !== undefined;
}

/** The Redis to use: the configured one when it answers, else an embedded redis-server (when the binary exists). */
async function chooseRedis(context: CliContext, config: Config): Promise<EmbeddedRedis | undefined> {
  // With redis.cluster or redis.sentinels set, that topology is the store: none to embed in its place.
  if (isRedisTopology(config.redis)) {
    await requireRedis(config);
    return undefined;
  }
  const problem = await redisProblem(config.redis);
  if (problem === undefined) return undefined;
  if (!redisServerOnPath())
    throw new CommandError(
      `No Redis answers at ${redisTarget(config.redis)} (${problem}) and redis-server is not on the PATH. Start ` +
        "Redis 7 or set REDIS_URL, then run this again.",
      EXIT_UNAVAILABLE,
    );
  const embedded = await startEmbeddedRedis();
  context.print(
    `No Redis answered at ${redisTarget(config.redis)}: started an embedded redis-server at ${embedded.url}`,
  );
  return embedded;
}

/** Resolves once the first actor has beaten (the gateway accepts tasks from then on), or after FIRST_BEAT_MS. */
async function firstBeat(context: CliContext, config: Config, supervisor: Promise<number>): Promise<boolean> {
  const redis = context.redis("start");
  const workers = new WorkerRegistry(redis, new KeySpace(config.redis.keyPrefix, config.redis.shards));
  let ended = false;
  void supervisor.then(() => {
    ended = true;
  });
  try {
    for (let waited = 0; waited < FIRST_BEAT_MS && !ended; waited += 100) {
      if (await workers.beaten(0)) return true;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return !ended;
  } finally {
    redis.disconnect();
  }
}

/**
 * A demo client of this start, named after the address it serves; earlier demo clients of that name are revoked:
 * their `start` no longer serves there (this one holds the port), so no running installation loses its key.
 */
async function demoClient(context: CliContext, config: Config, address: string): Promise<string> {
  const redis = context.redis("start");
  try {
    const clients = new ClientRegistry(redis, new KeySpace(config.redis.keyPrefix, config.redis.shards));
    const name = `demo@${address}`;
    const demo = await clients.add({ name });
    for (const old of await clients.list())
      if (old.name === name && !old.revoked && old.id !== demo.record.id) await clients.revoke(old.id);
    return demo.apiKey;
  } finally {
    redis.disconnect();
  }
}

function printBanner(context: CliContext, config: Config, gateway: RunningGateway, redis: string, key: string): void {
  const base = config.server.publicUrl === "" ? gateway.url : publicUrl(config);
  const { host } = config.server;
  const reach = WILDCARD_HOSTS.has(host)
    ? `bound to ${host}: every interface, so other machines can reach it`
    : host === LOOPBACK || host === "localhost" || host === "::1"
      ? "this machine only; --host 0.0.0.0 opens it to others"
      : `bound to ${host}`;
  context.print("");
  context.print(`a2a-runtime is serving on ${gateway.url} (${reach})`);
  for (const profile of config.profiles) {
    context.print(`  profile ${profile.name}: POST ${base}/a2a/${profile.name}  (handler ${profile.handler})`);
  }
  context.print(`  agent card: ${base}/.well-known/agent-card.json`);
  context.print(`  redis: ${redis}`);
  context.print(`  demo client key (shown once): ${key}`);
  context.print("");
  context.print(`Try: A2A_API_KEY=${key} npx a2a-runtime send --url ${base} "hello"`);
  context.print("");
}

export function registerStart(program: Command, context: CliContext): void {
  program
    .command("start")
    .description("gateway + supervisor with actors in one process tree, for a first run")
    .option("--port <n>", "gateway port (default: server.port; 0 picks a free one)", portNumber)
    .option("--host <address>", `interface the gateway binds to (default: ${LOOPBACK}; 0.0.0.0 for every interface)`)
    .option("--actors <n>", "actor processes (default: worker.actors)", positiveInteger)
    .option("--handlers <modules...>", HANDLERS_OPTION)
    .action(async (options: StartOptions) => {
      let config = context.config();
      const logger = context.logger("start");
      const handlerModules = await checkedHandlerModules(config, options.handlers);
      const overrides: Record<string, string> = {};
      if (options.host !== undefined) overrides.A2A_SERVER_HOST = options.host;
      else if (context.env.A2A_SERVER_HOST === undefined && !fileSetsHost(context.configFile()))
        overrides.A2A_SERVER_HOST = LOOPBACK;

      const embedded = await chooseRedis(context, config);
      if (embedded) overrides.A2A_REDIS_URL = embedded.url;
      config = context.configWith(overrides);
      const redisLine = embedded
        ? `an embedded redis-server at ${embedded.url}, deleted when this stops; for status, clients or redis-cli ` +
          `in another terminal: export REDIS_URL=${embedded.url}`
        : redisTarget(config.redis);

      const port = options.port ?? config.server.port;
      let gateway: RunningGateway;
      try {
        const { startGateway } = await loadGateway();
        gateway = await startGateway(config, {
          logger: context.logger("gateway"),
          cardSigningKey: signingKey(context),
          port,
        });
      } catch (error) {
        await embedded?.stop();
        throw isPortInUse(error) ? portInUseError(config.server.host, port) : error;
      }

      const { runSupervisor } = await import("../actors/index.ts");
      const supervisor = runSupervisor(config, {
        actors: options.actors ?? config.worker.actors,
        env: context.env,
        logger: context.logger("supervisor"),
        handlerModules,
      });
      // Print the endpoint once a worker has beaten, so the first request is not refused for want of one.
      if (await firstBeat(context, config, supervisor)) {
        const key = await demoClient(context, config, `${hostname()}:${gateway.port}`);
        printBanner(context, config, gateway, redisLine, key);
      }

      const code = await supervisor;
      logger.info("stopping gateway");
      await gateway.stop();
      await embedded?.stop();
      process.exit(code);
    });
}
