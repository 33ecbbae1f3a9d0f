// Renders the configuration reference (docs/configuration.md) from the schema itself, so the docs cannot drift:
// a unit test compares the file with this output, and `npm run docs:config` rewrites it.
import { Kind, type TSchema } from "@sinclair/typebox";
import { configEnvironmentVariables } from "./load.ts";
import { ConfigSchema, ProfileSchema } from "./schema.ts";

interface Row {
  path: string;
  type: string;
  default: string;
  description: string;
}

function typeOf(schema: TSchema): string {
  const kind = schema[Kind] as string;
  if (kind === "Union") {
    const literals = (schema.anyOf as TSchema[]).map((s) =>
      s.const === undefined ? typeOf(s) : JSON.stringify(s.const),
    );
    return literals.join(" \\| ");
  }
  if (kind === "Array") return `${typeOf(schema.items as TSchema)}[]`;
  if (kind === "Record" || kind === "Unknown") return "object";
  const range =
    schema.minimum !== undefined || schema.maximum !== undefined
      ? ` (${schema.minimum ?? ""}..${schema.maximum ?? ""})`
      : "";
  return `${kind.toLowerCase()}${range}`;
}

function rows(schema: TSchema, prefix: string, out: Row[]): Row[] {
  const properties = (schema.properties ?? {}) as Record<string, TSchema>;
  for (const [name, property] of Object.entries(properties)) {
    const path = prefix === "" ? name : `${prefix}.${name}`;
    if (property[Kind] === "Object" && property.properties) {
      rows(property, path, out);
      continue;
    }
    if (path === "profiles") continue;
    out.push({
      path,
      type: typeOf(property),
      default: property.default === undefined ? "" : `\`${JSON.stringify(property.default)}\``,
      description: String(property.description ?? "").replaceAll("|", "\\|"),
    });
  }
  return out;
}

function table(list: Row[], env?: Map<string, string>): string {
  const head = env
    ? "| key | variable | type | default | meaning |\n|---|---|---|---|---|"
    : "| key | type | default | meaning |\n|---|---|---|---|";
  const lines = list.map((r) =>
    env
      ? `| \`${r.path}\` | \`${env.get(r.path) ?? ""}\` | ${r.type} | ${r.default} | ${r.description} |`
      : `| \`${r.path}\` | ${r.type} | ${r.default} | ${r.description} |`,
  );
  return [head, ...lines].join("\n");
}

/** The whole of docs/configuration.md. */
export function renderConfigurationReference(): string {
  const env = new Map<string, string>();
  for (const v of configEnvironmentVariables()) {
    const known = env.get(v.path);
    env.set(v.path, known === undefined ? v.env : `${known}\`, \`${v.env}`);
  }
  return `# Configuration reference

<!-- Generated from src/config/schema.ts by \`npm run docs:config\`; a test fails when this file is stale. -->

a2a-runtime reads one JSON file (\`--config FILE\` or \`A2A_CONFIG\`), then \`A2A_*\` environment variables named after
each key's path (\`REDIS_URL\` is honoured too; \`A2A_REDIS_URL\` wins over it). Lists are comma-separated in the
environment. Profiles come only from the file. An invalid configuration stops the process at start with every problem
listed, each naming its path.

## Installation settings

${table(rows(ConfigSchema, "", []), env)}

## Profiles (\`profiles[]\`, file only)

Each profile publishes one skill at \`POST /a2a/<name>\` and binds a handler, its LLM, tools, guardrails and quotas.

${table(rows(ProfileSchema, "", []))}
`;
}
