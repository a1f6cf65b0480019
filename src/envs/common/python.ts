// Python's text forms, emulated where the environments must produce or read exactly what Python does: str() and
// repr() of strings and string tuples, str.strip(), str.format with named fields, float repr, json.dumps as Flask's
// tojson renders it, and a reader of the module-level string constants of a Python source (LaMer's prompt.py files).
// One module, so the prompts (LaMer's templates) and the WebShop port (its pages and reward) share one of each.

import { LamerError } from '../../errors.js';

// ---- str, repr ----

/** repr() of a Python str: single quotes unless the text has ' and no ", backslash escapes for control characters. */
export function pyStrRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === quote || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || (c >= 0x7f && c <= 0xa0) || c === 0xad) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out + quote;
}

/** The Python `repr` of a list of strings, as LaMer's memory prints Sokoban's moves: `['up', 'left']`. */
export function pyStringList(items: readonly string[]): string {
  return `[${items.map(pyStrRepr).join(', ')}]`;
}

/**
 * Python's str() of a value as goal.py passes it: a string as is, a tuple of strings (a synthetic goal's option,
 * `(name, value)`) as `('a', 'b')` with each element in repr form.
 */
export function pyStr(value: string | readonly string[]): string {
  if (typeof value === 'string') return value;
  const items = value.map(pyStrRepr);
  return items.length === 1 ? `(${items[0]},)` : `(${items.join(', ')})`;
}

// ---- str.strip ----

/** Whether a UTF-16 code unit is one of the characters Python's `str.isspace()` accepts (all of them are in the BMP). */
function isPySpace(c: number): boolean {
  if (c <= 0x20) return (c >= 0x09 && c <= 0x0d) || c >= 0x1c;
  if (c < 0x85) return false;
  return (
    c === 0x85 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000
  );
}

/** Python's `str.strip()` with no argument, in one pass from each end (so whitespace inside long text costs nothing). */
export function pyStrip(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isPySpace(text.charCodeAt(start))) start++;
  while (end > start && isPySpace(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

// ---- Python's str.format, named fields only ----

/**
 * `template.format(**fields)` as Python computes it for plain named fields: `{name}` replaced, `{{` and `}}` give
 * braces. A field that is not given, or a format spec, conversion, index or attribute (which LaMer's templates do not
 * use), stops with E_ENV naming the template.
 */
export function pyFormat(template: string, fields: Record<string, string | number>, where: string): string {
  let out = '';
  let i = 0;
  while (i < template.length) {
    const ch = template[i];
    if (ch === '{') {
      if (template[i + 1] === '{') {
        out += '{';
        i += 2;
        continue;
      }
      const close = template.indexOf('}', i);
      if (close < 0) throw new LamerError('E_ENV', `${where}: a '{' has no matching '}'`);
      const name = template.slice(i + 1, close);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
        throw new LamerError('E_ENV', `${where}: field {${name}} is not a plain name (formats, conversions and indexes are not supported)`);
      }
      if (!Object.hasOwn(fields, name)) {
        throw new LamerError('E_ENV', `${where}: field {${name}} is not one LaMer fills here (it fills ${Object.keys(fields).join(', ') || 'none'})`);
      }
      out += String(fields[name]);
      i = close + 1;
      continue;
    }
    if (ch === '}') {
      if (template[i + 1] !== '}') throw new LamerError('E_ENV', `${where}: a single '}' (write '}}' for a brace)`);
      out += '}';
      i += 2;
      continue;
    }
    out += ch;
    i++;
  }
  return out;
}

// ---- float repr and Flask's tojson ----

/** repr() of a Python float: the shortest digits that round-trip, scientific below 1e-4 and from 1e16 on. */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  const [mantissa, expText] = Math.abs(x).toExponential().split('e');
  const exp = Number(expText);
  const digits = mantissa.replace('.', '');
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  if (exp >= 0) {
    const whole = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
    const frac = digits.slice(exp + 1);
    return `${sign}${whole}.${frac.length > 0 ? frac : '0'}`;
  }
  return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
}

/** json.dumps of a str with ensure_ascii (non-ASCII as \uXXXX, astral characters as surrogate pairs). */
function pyJsonString(s: string, htmlSafe: boolean): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    const c = s.charCodeAt(i);
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (c < 0x20 || c > 0x7e || (htmlSafe && (ch === '<' || ch === '>' || ch === '&' || ch === "'"))) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return out + '"';
}

/**
 * Flask's `tojson` of a str-to-str mapping: json.dumps with sorted keys and ensure_ascii, then <, >, & and ' escaped as
 * \u003c, \u003e, \u0026 and \u0027.
 */
export function flaskToJson(map: ReadonlyMap<string, string>): string {
  const keys = [...map.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (keys.length === 0) return '{}';
  return `{${keys.map((k) => `${pyJsonString(k, true)}: ${pyJsonString(map.get(k)!, true)}`).join(', ')}}`;
}

// ---- reading Python string constants ----

interface Token {
  kind: 'name' | 'string' | 'op';
  text: string;
  /** For strings: the value. */
  value?: string;
  /** For strings: an f-string (its value needs the code run) or a bytes literal (not text). */
  notText?: boolean;
  /** Column of the token's first character. */
  column: number;
  line: number;
}

const IDENT_START = /[A-Za-z_]/;
const IDENT = /[A-Za-z0-9_]/;

/**
 * The module-level string constants of a Python source: `NAME = '...'`, with any of Python's quotes, prefixes r/u/b,
 * escapes, adjacent literals and parentheses (`NAME = ('a' 'b')`), and an optional annotation (`NAME: str = ...`).
 * Other statements are skipped; f-strings (their value depends on running the code) and bytes are left out.
 */
export function readPythonStrings(text: string, file = 'python source'): Map<string, string> {
  const lines = logicalLines(tokenize(text, file));
  const out = new Map<string, string>();
  for (const toks of lines) {
    if (toks.length < 3 || toks[0].column !== 0 || toks[0].kind !== 'name') continue;
    let i = 1;
    if (toks[i].text === ':') {
      if (toks[i + 1]?.kind !== 'name') continue;
      i += 2;
    }
    if (toks[i]?.text !== '=') continue;
    i++;
    let parens = 0;
    while (toks[i]?.text === '(') {
      parens++;
      i++;
    }
    const parts: Token[] = [];
    while (toks[i]?.kind === 'string') parts.push(toks[i++]);
    while (parens > 0 && toks[i]?.text === ')') {
      parens--;
      i++;
    }
    if (parts.length === 0 || parens !== 0 || i !== toks.length) continue;
    if (parts.some((p) => p.notText)) {
      out.delete(toks[0].text);
      continue;
    }
    out.set(toks[0].text, parts.map((p) => p.value as string).join(''));
  }
  return out;
}

/** Tokens grouped into logical lines: a newline ends one unless brackets are open or a backslash continues it. */
function logicalLines(tokens: Array<Token | 'newline'>): Token[][] {
  const lines: Token[][] = [];
  let current: Token[] = [];
  let depth = 0;
  for (const t of tokens) {
    if (t === 'newline') {
      if (depth === 0 && current.length > 0) {
        lines.push(current);
        current = [];
      }
      continue;
    }
    if (t.kind === 'op' && '([{'.includes(t.text)) depth++;
    if (t.kind === 'op' && ')]}'.includes(t.text)) depth = Math.max(0, depth - 1);
    current.push(t);
  }
  if (current.length > 0) lines.push(current);
  return lines;
}

function tokenize(text: string, file: string): Array<Token | 'newline'> {
  const out: Array<Token | 'newline'> = [];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '\n') {
      out.push('newline');
      i++;
      line++;
      lineStart = i;
      continue;
    }
    if (ch === '\\' && text[i + 1] === '\n') {
      i += 2; // explicit line joining
      line++;
      lineStart = i;
      continue;
    }
    if (ch === ' ' || ch === '\t' || ch === '\r' || ch === '\f') {
      i++;
      continue;
    }
    if (ch === '#') {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    const column = i - lineStart;
    if (IDENT_START.test(ch)) {
      let j = i;
      while (j < text.length && IDENT.test(text[j])) j++;
      const word = text.slice(i, j);
      if ((text[j] === '"' || text[j] === "'") && /^(?:[rRuUbBfF]|[rR][bBfF]|[bBfF][rR])$/.test(word)) {
        const s = readString(text, j, word.toLowerCase(), file, line);
        out.push({ kind: 'string', text: text.slice(i, s.end), value: s.value, notText: /[fb]/i.test(word), column, line });
        line += s.newlines;
        if (s.newlines > 0) lineStart = text.lastIndexOf('\n', s.end - 1) + 1;
        i = s.end;
        continue;
      }
      out.push({ kind: 'name', text: word, column, line });
      i = j;
      continue;
    }
    if (ch === '"' || ch === "'") {
      const s = readString(text, i, '', file, line);
      out.push({ kind: 'string', text: text.slice(i, s.end), value: s.value, column, line });
      line += s.newlines;
      if (s.newlines > 0) lineStart = text.lastIndexOf('\n', s.end - 1) + 1;
      i = s.end;
      continue;
    }
    out.push({ kind: 'op', text: ch, column, line });
    i++;
  }
  return out;
}

const SIMPLE_ESCAPES: Record<string, string> = { '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

/** One string literal starting at its opening quote: its value (escapes applied unless raw) and where it ends. */
function readString(text: string, start: number, prefix: string, file: string, line: number): { value: string; end: number; newlines: number } {
  const quote = text[start];
  const triple = text.startsWith(quote.repeat(3), start);
  const delim = triple ? quote.repeat(3) : quote;
  const raw = prefix.includes('r');
  let i = start + delim.length;
  let value = '';
  let newlines = 0;
  for (;;) {
    if (i >= text.length) throw new LamerError('E_ENV', `${file}:${line}: a string literal is not closed`);
    if (text.startsWith(delim, i)) return { value, end: i + delim.length, newlines };
    const ch = text[i];
    if (ch === '\n') {
      if (!triple) throw new LamerError('E_ENV', `${file}:${line}: a string literal is not closed on its line`);
      newlines++;
    }
    if (ch !== '\\') {
      value += ch;
      i++;
      continue;
    }
    const next = text[i + 1];
    if (next === undefined) throw new LamerError('E_ENV', `${file}:${line}: a string literal is not closed`);
    if (raw) {
      // A raw string keeps the backslash and the character after it (which cannot close the string).
      value += ch + next;
      if (next === '\n') newlines++;
      i += 2;
      continue;
    }
    if (next === '\n') {
      newlines++;
      i += 2; // a backslash-newline inside a string continues it
      continue;
    }
    if (next in SIMPLE_ESCAPES) {
      value += SIMPLE_ESCAPES[next];
      i += 2;
      continue;
    }
    const octal = /^[0-7]{1,3}/.exec(text.slice(i + 1, i + 4));
    if (octal) {
      value += String.fromCodePoint(parseInt(octal[0], 8));
      i += 1 + octal[0].length;
      continue;
    }
    const hexLength = next === 'x' ? 2 : next === 'u' ? 4 : next === 'U' ? 8 : 0;
    if (hexLength > 0) {
      const hex = text.slice(i + 2, i + 2 + hexLength);
      if (!new RegExp(`^[0-9a-fA-F]{${hexLength}}$`).test(hex)) {
        throw new LamerError('E_ENV', `${file}:${line}: a \\${next} escape needs ${hexLength} hex digits`);
      }
      value += String.fromCodePoint(parseInt(hex, 16));
      i += 2 + hexLength;
      continue;
    }
    if (next === 'N') throw new LamerError('E_ENV', `${file}:${line}: \\N{...} escapes are not supported in prompt templates`);
    // Python keeps an unknown escape as it is.
    value += ch + next;
    i += 2;
  }
}
