// The request message of an HTTP+JSON call, before its schema check: the JSON body (a POST) or the query string (a GET
// or DELETE), and over either the fields the path binds. Query names are the JSON names (`contextId`) or the proto's
// (`context_id`); values are typed by the method's schema. The body's Content-Type is checked before it is read.
import { type TSchema, TypeGuard } from "@sinclair/typebox";
import type { Config } from "../../config/index.ts";
import {
  A2A_PARAMS_SCHEMAS,
  type A2aMethod,
  InvalidParamsError,
  InvalidRequestError,
  RequestMediaTypeError,
} from "../../protocol/index.ts";
import { parseJsonBody, readCappedBody } from "../request-body.ts";
import type { RestRoute } from "./rest-routes.ts";

/** The media types a request body may be sent as (parameters such as charset aside). */
export const BODY_MEDIA_TYPES: readonly string[] = ["application/a2a+json", "application/json"];

/** `context_id` → `contextId`; a JSON name is returned as it is. */
export function jsonName(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
}

/** Whether a field's value can be written as one query parameter: a string, number, boolean or enum. */
function scalar(schema: TSchema): boolean {
  if (TypeGuard.IsUnion(schema)) return schema.anyOf.every((variant) => TypeGuard.IsLiteral(variant));
  return (
    TypeGuard.IsString(schema) ||
    TypeGuard.IsInteger(schema) ||
    TypeGuard.IsNumber(schema) ||
    TypeGuard.IsBoolean(schema)
  );
}

/** A query value as the field's schema types it; a value that does not parse stays a string for the schema to refuse. */
function typed(schema: TSchema, value: string): unknown {
  if (TypeGuard.IsInteger(schema) || TypeGuard.IsNumber(schema)) {
    return /^-?\d+$/.test(value) ? Number(value) : value;
  }
  if (TypeGuard.IsBoolean(schema)) {
    if (value === "true") return true;
    if (value === "false") return false;
  }
  return value;
}

/**
 * The request fields a query string names (A2A §11.5). Parameters that name no field of the method are ignored, as
 * unknown fields are; a field given twice (in either spelling) is refused, and so is a structured one (an object).
 */
export function queryFields(method: A2aMethod, query: URLSearchParams): Record<string, unknown> {
  const properties: Record<string, TSchema> = A2A_PARAMS_SCHEMAS[method].properties;
  const fields: Record<string, unknown> = {};
  for (const [name, value] of query) {
    const field = jsonName(name);
    const schema = Object.hasOwn(properties, field) ? properties[field] : undefined;
    if (schema === undefined) continue;
    if (Object.hasOwn(fields, field)) {
      throw new InvalidParamsError(`Invalid params: ${field}: given more than once`, [
        { field, description: "given more than once in the query string" },
      ]);
    }
    if (!scalar(schema)) {
      throw new InvalidParamsError(`Invalid params: ${field}: cannot be sent in the query string`, [
        { field, description: "a structured field cannot be sent in the query string" },
      ]);
    }
    fields[field] = typed(schema, value);
  }
  return fields;
}

/** Throws RequestMediaTypeError (415) unless the body is declared JSON or not declared at all. */
export function checkBodyMediaType(request: Request): void {
  const declared = request.headers.get("content-type");
  if (declared === null) return;
  const mediaType = declared.split(";")[0]?.trim().toLowerCase() ?? "";
  if (!BODY_MEDIA_TYPES.includes(mediaType)) throw new RequestMediaTypeError(mediaType);
}

/** The body as a JSON object (an empty body is `{}`), read under the body cap and the nesting limit. */
export async function readBodyFields(request: Request, server: Config["server"]): Promise<Record<string, unknown>> {
  checkBodyMediaType(request);
  const bytes = await readCappedBody(request, server.maxBodyBytes);
  if (bytes.byteLength === 0) return {};
  const value = parseJsonBody(bytes, server.maxJsonDepth);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidRequestError("The request body must be a JSON object: the method's request message");
  }
  return value as Record<string, unknown>;
}

/**
 * The request message: the body's or the query's fields, then the path's over them (the path names the resource; a
 * body that names another task does not redirect the call).
 */
export async function requestFields(
  route: RestRoute,
  request: Request,
  server: Config["server"],
): Promise<Record<string, unknown>> {
  const fields =
    route.fields === "body"
      ? await readBodyFields(request, server)
      : queryFields(route.method, new URL(request.url).searchParams);
  return { ...fields, ...route.pathFields };
}
