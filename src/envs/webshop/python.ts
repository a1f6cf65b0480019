// Python's text forms of values that reach WebShop's pages: float repr (price tags, the score on the done page) and
// json.dumps with sorted keys (Flask's tojson on the done page).

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
