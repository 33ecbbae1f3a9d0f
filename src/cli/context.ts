// What every command gets: the loaded configuration, a logger, a Redis connection, the environment as given.
// Only the entry (src/cli.ts) builds it; commands never read process.env themselves.
import { type Config, loadConfig, unknownEnvironmentVariables } from "../config/index.ts";
import { createRedis, type RedisLike } from "../journal/index.ts";
import { createLogger, type Logger, wantsPrettyLogs } from "../log.ts";

export interface CliContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Loads the configuration once (file from --config or A2A_CONFIG, then A2A_* variables); throws ConfigError. */
  config(): Config;
  /** The config file in use (--config, else A2A_CONFIG), or undefined. */
  configFile(): string | undefined;
  /** Loads the configuration again with some variables set on top of the environment (used by `start`). */
  configWith(overrides: Record<string, string>): Config;
  logger(name: string): Logger;
  /** A new Redis connection to the configured server or cluster; the caller closes it. */
  redis(name: string): RedisLike;
  /** Writes a line to standard output (tables, JSON for --json). */
  print(line: string): void;
}

export function createContext(
  env: Record<string, string | undefined>,
  configFile: () => string | undefined,
): CliContext {
  let loaded: Config | undefined;
  const fileInUse = (): string | undefined => configFile() ?? (env.A2A_CONFIG || undefined);
  const context: CliContext = {
    env,
    config() {
      if (!loaded) {
        const file = configFile();
        loaded = loadConfig(file === undefined ? { env } : { env, file });
        warnUnknownVariables(env);
      }
      return loaded;
    },
    configFile: fileInUse,
    configWith(overrides) {
      const file = configFile();
      const merged = { ...env, ...overrides };
      loaded = loadConfig(file === undefined ? { env: merged } : { env: merged, file });
      return loaded;
    },
    logger(name) {
      return createLogger(name, context.config().log.level, { pretty: wantsPrettyLogs(process.stderr, env) });
    },
    redis(name) {
      const redis = createRedis(context.config().redis, `a2a-${name}`, { maxRetriesPerRequest: 2 });
      redis.on("error", () => {});
      return redis;
    },
    print(line) {
      process.stdout.write(`${line}\n`);
    },
  };
  return context;
}

/** The PEM key that signs agent cards: the variable server.cardSigningKeyEnv names, from the CLI's environment. */
export function signingKey(context: CliContext): string | undefined {
  const name = context.config().server.cardSigningKeyEnv;
  return name === "" ? undefined : context.env[name];
}

/** One warning line per A2A_* variable that sets nothing: a typo would otherwise run silently on the default. */
function warnUnknownVariables(env: Readonly<Record<string, string | undefined>>): void {
  for (const { name, suggestion } of unknownEnvironmentVariables(env)) {
    const hint = suggestion === undefined ? "" : ` (did you mean ${suggestion}?)`;
    process.stderr.write(`warning: ${name} is not a setting of a2a-runtime; it is ignored${hint}\n`);
  }
}
