// Row advantages reach the loss per response token (SPEC §4: the same value for every token of the row).

import { LamerError } from '../errors.js';

function checkLengths(rows: number, responseLengths: Int32Array, what: string): number {
  if (responseLengths.length !== rows) {
    throw new LamerError('E_ROWS', `${what}: responseLengths has ${responseLengths.length} entries but there are ${rows} rows`);
  }
  let total = 0;
  for (let i = 0; i < rows; i++) {
    if (responseLengths[i] < 0) {
      throw new LamerError('E_ROWS', `${what}: responseLengths row ${i} is negative (${responseLengths[i]})`);
    }
    total += responseLengths[i];
  }
  return total;
}

/**
 * Repeats each row's value over its response tokens. Without `width` the result is packed (row 0's tokens, then row
 * 1's, ...; length = sum of lengths); with `width` it is a [rows, width] matrix, zero past each response's end.
 */
export function expandToTokens(rowValues: Float32Array, responseLengths: Int32Array, width?: number): Float32Array {
  const total = checkLengths(rowValues.length, responseLengths, 'expandToTokens');
  if (width === undefined) {
    const out = new Float32Array(total);
    let offset = 0;
    for (let i = 0; i < rowValues.length; i++) {
      out.fill(rowValues[i], offset, offset + responseLengths[i]);
      offset += responseLengths[i];
    }
    return out;
  }
  if (!Number.isInteger(width) || width < 0) {
    throw new LamerError('E_ROWS', `expandToTokens: width must be a non-negative integer, found ${width}`);
  }
  const out = new Float32Array(rowValues.length * width);
  for (let i = 0; i < rowValues.length; i++) {
    if (responseLengths[i] > width) {
      throw new LamerError('E_ROWS', `expandToTokens: row ${i} has ${responseLengths[i]} response tokens, more than width ${width}`);
    }
    out.fill(rowValues[i], i * width, i * width + responseLengths[i]);
  }
  return out;
}

export { checkLengths as checkResponseLengths };
