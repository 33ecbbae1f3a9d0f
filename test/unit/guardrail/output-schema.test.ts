// The output-schema guardrail: each data part must satisfy the profile's JSON Schema; the reason gives the part and
// the JSON Pointer of the first failing value. Unsupported keywords refuse to build instead of being ignored.
import { describe, expect, test } from "bun:test";
import { GuardrailConfigError, outputSchemaGuardrail } from "../../../src/guardrail/index.ts";
import { artifact, reasonOf, textOutput, verdict } from "./fixtures.ts";

const ORDER_SCHEMA = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  title: "Order",
  type: "object",
  required: ["id", "items"],
  additionalProperties: false,
  properties: {
    id: { type: "string", pattern: "^ord-[0-9]+$" },
    status: { enum: ["open", "shipped", null] },
    items: {
      type: "array",
      minItems: 1,
      items: {
        type: "object",
        required: ["sku", "price"],
        properties: { sku: { type: "string", minLength: 1 }, price: { type: "number", minimum: 0 } },
      },
    },
    note: { type: ["string", "null"], maxLength: 20 },
  },
};

const valid = { id: "ord-1", status: "open", items: [{ sku: "a", price: 2.5 }], note: null };
const withData = (...data: unknown[]) => textOutput("", artifact(...data.map((value) => ({ data: value }))));

describe("outputSchemaGuardrail", () => {
  const guardrail = outputSchemaGuardrail(ORDER_SCHEMA);

  test("data that satisfies the schema passes", async () => {
    expect(await verdict(guardrail, withData(valid))).toEqual({ pass: true });
    expect(await verdict(guardrail, withData({ ...valid, status: null, note: "fragile" }))).toEqual({ pass: true });
  });

  test("output without data parts passes; text is not the schema's concern", async () => {
    expect(await verdict(guardrail, textOutput("not json", artifact({ text: "{}" })))).toEqual({ pass: true });
  });

  test.each([
    [{ ...valid, items: [{ sku: "a", price: -1 }] }, "/items/0/price"],
    [{ ...valid, items: [{ sku: "a", price: "2" }] }, "/items/0/price"],
    [{ ...valid, items: [] }, "/items"],
    [{ ...valid, id: "order-1" }, "/id"],
    [{ id: "ord-1" }, "/items"],
    [{ ...valid, extra: true }, "/extra"],
    [{ ...valid, status: "lost" }, "/status"],
    [{ ...valid, note: "x".repeat(21) }, "/note"],
    [[valid], "/"],
  ])("%j fails at %s", async (data, path) => {
    expect(reasonOf(await verdict(guardrail, withData(data)))).toStartWith(`artifact 0 part 0: ${path}: `);
  });

  test("the reason names which part failed and does not quote the value", async () => {
    const output = textOutput("", artifact({ data: valid }), artifact({ text: "t" }, { data: { id: "secret-9" } }));
    const reason = reasonOf(await verdict(guardrail, output));
    expect(reason).toStartWith("artifact 1 part 1: ");
    expect(reason).not.toContain("secret-9");
  });
});

describe("JSON Schema support", () => {
  const check = async (schema: Record<string, unknown>, data: unknown) =>
    (await verdict(outputSchemaGuardrail(schema), withData(data))).pass;

  test("combinators: anyOf, allOf, oneOf, not, const", async () => {
    const oneOf = { oneOf: [{ type: "integer" }, { type: "number", minimum: 10 }] };
    expect(await check(oneOf, 3)).toBe(true);
    expect(await check(oneOf, 10.5)).toBe(true);
    expect(await check(oneOf, 12)).toBe(false); // matches both
    expect(await check({ anyOf: [{ type: "string" }, { type: "boolean" }] }, true)).toBe(true);
    expect(await check({ anyOf: [{ type: "string" }, { type: "boolean" }] }, 1)).toBe(false);
    expect(await check({ allOf: [{ minimum: 1 }, { maximum: 3 }] }, 4)).toBe(false);
    expect(await check({ not: { type: "null" } }, null)).toBe(false);
    expect(await check({ const: { a: [1, 2] } }, { a: [1, 2] })).toBe(true);
    expect(await check({ const: { a: [1, 2] } }, { a: [2, 1] })).toBe(false);
  });

  test("keywords without a type constrain only values of their type", async () => {
    const schema = { properties: { a: { type: "number" } }, minLength: 2 };
    expect(await check(schema, 5)).toBe(true);
    expect(await check(schema, { a: 1 })).toBe(true);
    expect(await check(schema, { a: "1" })).toBe(false);
    expect(await check(schema, "x")).toBe(false);
  });

  test("required names a property even when properties does not list it", async () => {
    expect(await check({ type: "object", required: ["id"] }, {})).toBe(false);
    expect(await check({ type: "object", required: ["id"] }, { id: null })).toBe(true);
  });

  test("local references are followed", async () => {
    const schema = {
      $defs: { price: { type: "number", minimum: 0 } },
      type: "array",
      items: { $ref: "#/$defs/price" },
    };
    expect(await check(schema, [1, 2])).toBe(true);
    expect(await check(schema, [1, -2])).toBe(false);
  });

  test("boolean schemas, integers, uniqueItems and additionalProperties as a schema", async () => {
    expect(await check({ type: "object", properties: { a: false } }, { a: 1 })).toBe(false);
    expect(await check({ type: "integer" }, 1.5)).toBe(false);
    expect(await check({ type: "array", uniqueItems: true }, [{ a: 1 }, { a: 1 }])).toBe(false);
    expect(await check({ type: "object", additionalProperties: { type: "string" } }, { x: 1 })).toBe(false);
    expect(await check({ type: "object", additionalProperties: { type: "string" } }, { x: "1" })).toBe(true);
  });

  test("keywords beyond the basics are honoured: patternProperties, if/else, recursive references", async () => {
    expect(await check({ type: "object", patternProperties: { "^x": { type: "number" } } }, { xa: "1" })).toBe(false);
    expect(await check({ if: { type: "string" }, else: { minimum: 1 } }, 0)).toBe(false);
    const tree = { $defs: { node: { type: "array", items: { $ref: "#/$defs/node" } } }, $ref: "#/$defs/node" };
    expect(await check(tree, [[], [[]]])).toBe(true);
    expect(await check(tree, [[1]])).toBe(false);
  });

  test.each([
    [{ $ref: "https://example.com/schema.json" }, "can't resolve reference"],
    [{ type: "strnig" }, "outputSchema does not compile"],
    [{ type: "string", pattern: "(" }, "Invalid regular expression"],
    [{ type: "number", exclusiveMinimum: true }, "outputSchema does not compile"],
  ])("%j refuses to build", (schema, problem) => {
    expect(() => outputSchemaGuardrail(schema)).toThrow(GuardrailConfigError);
    expect(() => outputSchemaGuardrail(schema)).toThrow(problem);
  });
});
