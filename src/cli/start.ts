// `a2a-runtime start`: everything in one process tree for a first run: Redis (REDIS_URL, or an embedded redis-server
// when none answers), the gateway and the supervisor with its actors, and a demo client whose key is printed once.
import type { Command } from "commander";
import { publicUrl } from "../config/index.ts";
import { startGateway } from "../gateway/index.ts";
import { ClientRegistry, KeySpace } from "../journal/index.ts";
import { type CliContext, signingKey } from "./context.ts";
import { type EmbeddedRedis, redisAnswers, redisServerOnPath, startEmbeddedRedis } from "./embedded-redis.ts";
import { positiveInteger } from "./work.ts";

const DEMO_CLIENT = "demo";

export function registerStart(program: Command, context: CliContext): void {
  program
    .command("start")
    .description("gateway + supervisor with actors in one process tree, for a first run")
    .option("--port <n>", "gateway port (default: server.port)", (v) => Number(v))
    .option("--actors <n>", "actor processes (default: worker.actors)", positiveInteger)
    .action(async (options: { port?: number; actors?: number }) => {
      let config = context.config();
      const logger = context.logger("start");
      let embedded: EmbeddedRedis | undefined;
      // With redis.cluster set the cluster is the store: no single Redis to probe, none to embed.
      if (config.redis.cluster.length === 0 && !(await redisAnswers(config.redis.url))) {
        if (!redisServerOnPath()) {
          process.stderr.write(`No Redis answers at ${config.redis.url} and redis-server is not on the PATH.\n`);
          process.stderr.write("Start Redis 7 or set REDIS_URL, then run this again.\n");
          process.exit(69);
        }
        embedded = await startEmbeddedRedis();
        config = context.configWith({ A2A_REDIS_URL: embedded.url });
        context.print(`No Redis answered at the configured URL: started an embedded redis-server at ${embedded.url}`);
      }

      const redis = context.redis("start");
      const keys = new KeySpace(config.redis.keyPrefix, config.redis.shards);
      const clients = new ClientRegistry(redis, keys);
      for (const old of await clients.list())
        if (old.name === DEMO_CLIENT && !old.revoked) await clients.revoke(old.id);
      const demo = await clients.add({ name: DEMO_CLIENT });

      const { runSupervisor } = await import("../actors/index.ts");
      const supervisor = runSupervisor(config, {
        actors: options.actors ?? config.worker.actors,
        env: context.env,
        logger: context.logger("supervisor"),
      });
      // Print the endpoint once a worker has beaten, so the first request is not refused for want of one.
      for (let waited = 0; waited < 15_000 && !(await redis.exists(keys.live(0))); waited += 100) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      redis.disconnect();

      const gateway = await startGateway(config, {
        logger: context.logger("gateway"),
        cardSigningKey: signingKey(context),
        ...(options.port === undefined ? {} : { port: options.port }),
      });
      const base = config.server.publicUrl === "" ? gateway.url : publicUrl(config);
      context.print("");
      context.print(`a2a-runtime is serving on ${gateway.url}`);
      for (const profile of config.profiles) {
        context.print(`  profile ${profile.name}: POST ${base}/a2a/${profile.name}  (handler ${profile.handler})`);
      }
      context.print(`  agent card: ${base}/.well-known/agent-card.json`);
      context.print(`  demo client key (shown once): ${demo.apiKey}`);
      context.print("");
      context.print(`Try: A2A_API_KEY=${demo.apiKey} npx a2a-runtime send --url ${base} "hello"`);
      context.print("");

      const code = await supervisor;
      logger.info("stopping gateway");
      await gateway.stop();
      await embedded?.stop();
      process.exit(code);
    });
}
