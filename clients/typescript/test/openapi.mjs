// Checks of the client against an OpenAPI document: its TypeScript types
// (read with the TypeScript compiler from src/), its route table, and real
// answers. Each check returns a list of problems, empty when all agree, so
// that a test can both assert agreement and show that a drift is caught.
import ts from "typescript";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const src = join(dirname(fileURLToPath(import.meta.url)), "..", "src");

// loadClientTypes compiles src/ and returns the checker, the interfaces
// tagged `@schema NAME` by name, the type aliases tagged `@schemaEnum PATH`,
// and the Engram class.
export function loadClientTypes() {
  const program = ts.createProgram([join(src, "index.ts")], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
    types: [],
    strict: true,
    noEmit: true,
  });
  const diags = ts.getPreEmitDiagnostics(program);
  if (diags.length > 0) {
    throw new Error(ts.formatDiagnostics(diags, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => src, getNewLine: () => "\n" }));
  }
  const checker = program.getTypeChecker();
  const interfaces = new Map();
  const enums = new Map();
  let engram;
  for (const file of program.getSourceFiles()) {
    if (!file.fileName.startsWith(src)) continue;
    ts.forEachChild(file, (node) => {
      if (ts.isInterfaceDeclaration(node)) {
        const name = tagOf(node, "schema");
        if (name) {
          if (interfaces.has(name)) throw new Error(`two interfaces are tagged @schema ${name}`);
          interfaces.set(name, { node, name: node.name.text, type: checker.getTypeAtLocation(node) });
        }
      } else if (ts.isTypeAliasDeclaration(node)) {
        const path = tagOf(node, "schemaEnum");
        if (path) enums.set(path, { node, name: node.name.text, type: checker.getTypeAtLocation(node) });
      } else if (ts.isClassDeclaration(node) && node.name?.text === "Engram") {
        engram = node;
      }
    });
  }
  return { checker, interfaces, enums, engram };
}

function tagOf(node, tag) {
  for (const t of ts.getJSDocTags(node)) {
    if (t.tagName.text === tag) return ts.getTextOfJSDocComment(t.comment)?.trim();
  }
  return undefined;
}

// schemaTagOf answers the @schema tag of the interface a type is, if any.
function schemaTagOf(type) {
  const decl = type.getSymbol()?.declarations?.[0];
  return decl && ts.isInterfaceDeclaration(decl) ? tagOf(decl, "schema") : undefined;
}

function refName(s) {
  return s?.$ref?.startsWith("#/components/schemas/") ? s.$ref.slice("#/components/schemas/".length) : undefined;
}

// checkTypes compares every tagged interface with its schema: the same
// fields, the API's required ones declared and not optional, and types that
// agree. requestSchemas names the schemas the client sends, whose
// date-times may be given as a Date.
export function checkTypes(spec, { checker, interfaces, enums }, requestSchemas) {
  const problems = [];
  const schemas = spec.components?.schemas ?? {};
  for (const [name, { type, node, name: tsName }] of interfaces) {
    const schema = schemas[name];
    const where = `${tsName} (@schema ${name})`;
    if (!schema) {
      problems.push(`${where}: the API has no schema ${name}`);
      continue;
    }
    const props = schema.properties ?? {};
    const required = new Set(schema.required ?? []);
    const declared = new Map();
    for (const p of checker.getPropertiesOfType(type)) declared.set(p.getName(), p);
    for (const [field, p] of declared) {
      if (!(field in props)) {
        problems.push(`${where}.${field}: the API's ${name} has no field ${field}`);
        continue;
      }
      const optional = (p.flags & ts.SymbolFlags.Optional) !== 0;
      const t = checker.getNonNullableType(checker.getTypeOfSymbolAtLocation(p, node));
      checkType(`${where}.${field}`, t, props[field], checker, requestSchemas.has(name), problems);
      if (required.has(field) && optional) problems.push(`${where}.${field}: the API always sends or requires it, the client declares it optional`);
    }
    for (const field of Object.keys(props)) {
      if (!declared.has(field)) problems.push(`${where}: the API's ${name} has field ${field}, which the client does not declare`);
    }
  }
  for (const [path, { type, name }] of enums) {
    const [schemaName, ...fields] = path.split(".");
    let s = schemas[schemaName];
    for (const f of fields) s = s?.properties?.[f];
    if (!s?.enum) {
      problems.push(`${name} (@schemaEnum ${path}): the API has no enum there`);
      continue;
    }
    const lits = literals(type);
    for (const v of lits) if (!s.enum.includes(v)) problems.push(`${name}: "${v}" is not one of the API's ${path} (${s.enum.join(", ")})`);
    for (const v of s.enum) if (!lits.includes(v)) problems.push(`${name}: the API's ${path} has "${v}", which the client does not declare`);
  }
  return problems;
}

function literals(type) {
  const members = type.isUnion() ? type.types : [type];
  return members.filter((m) => m.isStringLiteral()).map((m) => m.value);
}

function checkType(where, t, s, checker, isRequest, problems) {
  const ref = refName(s);
  if (ref) {
    const tag = schemaTagOf(t);
    if (tag !== ref) problems.push(`${where}: the API's field is a ${ref}, the client's type is ${checker.typeToString(t)}${tag ? ` (@schema ${tag})` : ""}`);
    return;
  }
  const members = t.isUnion() ? t.types : [t];
  const is = (m, flag) => (m.flags & flag) !== 0;
  switch (s.type) {
    case "string": {
      for (const m of members) {
        const ok = is(m, ts.TypeFlags.StringLike) || (isRequest && s.format === "date-time" && m.getSymbol()?.getName() === "Date");
        if (!ok) problems.push(`${where}: the API's field is a string${s.format ? ` (${s.format})` : ""}, the client's type has ${checker.typeToString(m)}`);
      }
      const lits = literals(t);
      const plain = members.some((m) => is(m, ts.TypeFlags.String));
      if (lits.length > 0 && !plain) {
        if (!s.enum) problems.push(`${where}: the client lists values (${lits.join(", ")}) the API does not enumerate`);
        else for (const v of lits) if (!s.enum.includes(v)) problems.push(`${where}: "${v}" is not one of the API's values (${s.enum.join(", ")})`);
        if (s.enum) for (const v of s.enum) if (!lits.includes(v)) problems.push(`${where}: the API's value "${v}" is missing from the client's type`);
      }
      return;
    }
    case "integer":
    case "number":
      if (!members.every((m) => is(m, ts.TypeFlags.NumberLike))) problems.push(`${where}: the API's field is a ${s.type}, the client's type is ${checker.typeToString(t)}`);
      return;
    case "boolean":
      if (!members.every((m) => is(m, ts.TypeFlags.BooleanLike))) problems.push(`${where}: the API's field is a boolean, the client's type is ${checker.typeToString(t)}`);
      return;
    case "array":
      if (!checker.isArrayType(t)) {
        problems.push(`${where}: the API's field is an array, the client's type is ${checker.typeToString(t)}`);
        return;
      }
      checkType(`${where}[]`, checker.getTypeArguments(t)[0], s.items ?? {}, checker, isRequest, problems);
      return;
    case "object": {
      if (s.properties) {
        problems.push(`${where}: the API's field is an inline object; give it a schema of its own`);
        return;
      }
      const index = checker.getIndexInfoOfType(t, ts.IndexKind.String);
      if (!index || checker.getPropertiesOfType(t).length > 0) {
        problems.push(`${where}: the API's field is a map, the client's type is ${checker.typeToString(t)}`);
        return;
      }
      if (typeof s.additionalProperties === "object") checkType(`${where}{}`, index.type, s.additionalProperties, checker, isRequest, problems);
      return;
    }
    default:
      problems.push(`${where}: a schema of type ${s.type ?? JSON.stringify(s)} the check does not know`);
  }
}

function resolve(spec, obj) {
  if (obj?.$ref?.startsWith("#/components/")) {
    const [kind, name] = obj.$ref.slice("#/components/".length).split("/");
    return spec.components?.[kind]?.[name];
  }
  return obj;
}

// checkRoutes compares the client's route table with the API's paths, and
// each Engram method with the route of its name.
export function checkRoutes(spec, routes, { checker, engram }) {
  const problems = [];
  for (const [name, r] of Object.entries(routes)) {
    const where = `ROUTES.${name} (${r.method} ${r.path})`;
    const op = spec.paths?.[r.path]?.[r.method.toLowerCase()];
    if (!op) {
      problems.push(`${where}: the API has no such operation`);
      continue;
    }
    const params = (op.parameters ?? []).map((p) => resolve(spec, p));
    const queryNames = params.filter((p) => p.in === "query").map((p) => p.name);
    for (const q of r.query) if (!queryNames.includes(q)) problems.push(`${where}: the API takes no query parameter ${q} (it takes ${queryNames.join(", ") || "none"})`);
    const pathNames = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    for (const p of params.filter((p) => p.in === "path")) if (!pathNames.includes(p.name)) problems.push(`${where}: the API's path parameter ${p.name} is not filled`);
    for (const p of params.filter((p) => p.required && p.in === "query")) {
      if (!r.query.includes(p.name)) problems.push(`${where}: the API requires query parameter ${p.name}, which the client never sends`);
    }
    const bodySchema = op.requestBody?.content?.["application/json"]?.schema;
    const bodies = bodySchema ? (bodySchema.oneOf ?? [bodySchema]).map(refName) : [];
    if (bodies.join() !== [...r.body].join()) problems.push(`${where}: the API's body is ${bodies.join(" or ") || "none"}, the client sends ${r.body.join(" or ") || "none"}`);
    if (op.requestBody?.required && r.body.length === 0) problems.push(`${where}: the API requires a body`);
    const answer = refName(op.responses?.[String(r.status)]?.content?.["application/json"]?.schema);
    if (answer !== r.response) problems.push(`${where}: the API answers ${r.status} with ${answer ?? "nothing"}, the client expects ${r.response}`);
  }
  // Every public method of Engram calls the route of its name and resolves
  // to that route's answer.
  for (const member of engram.members) {
    if (!ts.isMethodDeclaration(member) || !member.name || ts.isPrivateIdentifier(member.name)) continue;
    const name = member.name.getText();
    const r = routes[name];
    if (!r) {
      problems.push(`Engram.${name}: no route of that name in ROUTES`);
      continue;
    }
    const sig = checker.getSignatureFromDeclaration(member);
    const ret = checker.getReturnTypeOfSignature(sig);
    const inner = ret.getSymbol()?.getName() === "Promise" ? checker.getTypeArguments(ret)[0] : undefined;
    const tag = inner && schemaTagOf(inner);
    if (tag !== r.response) problems.push(`Engram.${name}: resolves to ${inner ? checker.typeToString(inner) : checker.typeToString(ret)}, not the interface of ${r.response}`);
  }
  for (const name of Object.keys(routes)) {
    if (!engram.members.some((m) => ts.isMethodDeclaration(m) && m.name?.getText() === name)) problems.push(`ROUTES.${name}: no Engram method of that name`);
  }
  return problems;
}

// conforms lists how a JSON value departs from a schema: a missing required
// field, a field the schema does not have, a wrong type.
export function conforms(spec, schema, value, where = "answer") {
  const problems = [];
  const s = resolve(spec, schema);
  if (!s) return [`${where}: no schema ${schema.$ref}`];
  if (s.oneOf) {
    const ok = s.oneOf.some((alt) => conforms(spec, alt, value, where).length === 0);
    return ok ? [] : [`${where}: matches none of ${s.oneOf.map((a) => refName(a) ?? "?").join(", ")}`];
  }
  const type = Array.isArray(value) ? "array" : value === null ? "null" : typeof value;
  switch (s.type) {
    case "object": {
      if (type !== "object") return [`${where}: ${type}, not an object`];
      for (const r of s.required ?? []) if (!(r in value)) problems.push(`${where}.${r}: required, missing`);
      for (const [k, v] of Object.entries(value)) {
        if (s.properties && k in s.properties) problems.push(...conforms(spec, s.properties[k], v, `${where}.${k}`));
        else if (typeof s.additionalProperties === "object") problems.push(...conforms(spec, s.additionalProperties, v, `${where}.${k}`));
        else if (s.additionalProperties !== true) problems.push(`${where}.${k}: not in the schema`);
      }
      return problems;
    }
    case "array":
      if (type !== "array") return [`${where}: ${type}, not an array`];
      value.forEach((v, i) => problems.push(...conforms(spec, s.items ?? {}, v, `${where}[${i}]`)));
      return problems;
    case "string":
      if (type !== "string") return [`${where}: ${type}, not a string`];
      if (s.enum && !s.enum.includes(value)) return [`${where}: "${value}" is not one of ${s.enum.join(", ")}`];
      if (s.format === "date-time" && Number.isNaN(Date.parse(value))) return [`${where}: "${value}" is not a date-time`];
      return [];
    case "integer":
      return Number.isInteger(value) ? [] : [`${where}: ${JSON.stringify(value)}, not an integer`];
    case "number":
      return type === "number" ? [] : [`${where}: ${type}, not a number`];
    case "boolean":
      return type === "boolean" ? [] : [`${where}: ${type}, not a boolean`];
    default:
      return [];
  }
}
