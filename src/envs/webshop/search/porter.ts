// The Porter stemmer as Lucene's PorterStemFilter applies it: Martin Porter's reference (C) version of the 1980
// algorithm, with its two departures ("bli" -> "ble", "logi" -> "log"), on UTF-16 code units, leaving words of one or
// two characters alone. Any character other than a, e, i, o, u (and y after a consonant) counts as a consonant.

class Stemmer {
  b: string[];
  k: number;
  j = 0;

  constructor(word: string) {
    this.b = word.split('');
    this.k = this.b.length - 1;
  }

  cons(i: number): boolean {
    switch (this.b[i]) {
      case 'a':
      case 'e':
      case 'i':
      case 'o':
      case 'u':
        return false;
      case 'y':
        return i === 0 ? true : !this.cons(i - 1);
      default:
        return true;
    }
  }

  /** The number of vowel-consonant sequences in b[0..j]. */
  m(): number {
    let n = 0;
    let i = 0;
    const j = this.j;
    for (;;) {
      if (i > j) return n;
      if (!this.cons(i)) break;
      i++;
    }
    i++;
    for (;;) {
      for (;;) {
        if (i > j) return n;
        if (this.cons(i)) break;
        i++;
      }
      i++;
      n++;
      for (;;) {
        if (i > j) return n;
        if (!this.cons(i)) break;
        i++;
      }
      i++;
    }
  }

  vowelInStem(): boolean {
    for (let i = 0; i <= this.j; i++) if (!this.cons(i)) return true;
    return false;
  }

  doubleC(j: number): boolean {
    if (j < 1) return false;
    if (this.b[j] !== this.b[j - 1]) return false;
    return this.cons(j);
  }

  cvc(i: number): boolean {
    if (i < 2 || !this.cons(i) || this.cons(i - 1) || !this.cons(i - 2)) return false;
    const ch = this.b[i];
    return !(ch === 'w' || ch === 'x' || ch === 'y');
  }

  ends(s: string): boolean {
    const o = this.k - s.length + 1;
    if (o < 0) return false;
    for (let i = 0; i < s.length; i++) if (this.b[o + i] !== s[i]) return false;
    this.j = this.k - s.length;
    return true;
  }

  setTo(s: string): void {
    const o = this.j + 1;
    for (let i = 0; i < s.length; i++) this.b[o + i] = s[i];
    this.k = this.j + s.length;
  }

  r(s: string): void {
    if (this.m() > 0) this.setTo(s);
  }

  /** Plurals and -ed / -ing. */
  step1(): void {
    if (this.b[this.k] === 's') {
      if (this.ends('sses')) this.k -= 2;
      else if (this.ends('ies')) this.setTo('i');
      else if (this.b[this.k - 1] !== 's') this.k--;
    }
    if (this.ends('eed')) {
      if (this.m() > 0) this.k--;
    } else if ((this.ends('ed') || this.ends('ing')) && this.vowelInStem()) {
      this.k = this.j;
      if (this.ends('at')) this.setTo('ate');
      else if (this.ends('bl')) this.setTo('ble');
      else if (this.ends('iz')) this.setTo('ize');
      else if (this.doubleC(this.k)) {
        const ch = this.b[this.k];
        this.k--;
        if (ch === 'l' || ch === 's' || ch === 'z') this.k++;
      } else if (this.m() === 1 && this.cvc(this.k)) this.setTo('e');
    }
  }

  /** Terminal y to i when there is another vowel in the stem. */
  step2(): void {
    if (this.ends('y') && this.vowelInStem()) this.b[this.k] = 'i';
  }

  /** Double suffixes to single ones. */
  step3(): void {
    if (this.k > 0) this.replaceFirst(STEP3[this.b[this.k - 1]]);
  }

  /** -ic-, -full, -ness etc. */
  step4(): void {
    this.replaceFirst(STEP4[this.b[this.k]]);
  }

  /** The first rule whose suffix ends the word, applied through r() (steps 3 and 4). */
  private replaceFirst(rules: ReadonlyArray<[string, string]> | undefined): void {
    for (const [suffix, replacement] of rules ?? []) {
      if (this.ends(suffix)) {
        this.r(replacement);
        return;
      }
    }
  }

  /** -ant, -ence etc., in context <c>vcvc<v>. */
  step5(): void {
    if (this.k === 0) return;
    const suffixes = STEP5[this.b[this.k - 1]];
    if (suffixes === undefined) return;
    let found = false;
    for (const suffix of suffixes) {
      if (!this.ends(suffix)) continue;
      if (suffix === 'ion' && !(this.j >= 0 && (this.b[this.j] === 's' || this.b[this.j] === 't'))) continue;
      found = true;
      break;
    }
    if (found && this.m() > 1) this.k = this.j;
  }

  /** A final -e, and -ll to -l, when m() > 1. */
  step6(): void {
    this.j = this.k;
    if (this.b[this.k] === 'e') {
      const a = this.m();
      if (a > 1 || (a === 1 && !this.cvc(this.k - 1))) this.k--;
    }
    if (this.b[this.k] === 'l' && this.doubleC(this.k) && this.m() > 1) this.k--;
  }

  stem(): string {
    if (this.k > 1) {
      this.step1();
      this.step2();
      this.step3();
      this.step4();
      this.step5();
      this.step6();
    }
    return this.b.slice(0, this.k + 1).join('');
  }
}

const STEP3: Record<string, Array<[string, string]>> = {
  a: [
    ['ational', 'ate'],
    ['tional', 'tion'],
  ],
  c: [
    ['enci', 'ence'],
    ['anci', 'ance'],
  ],
  e: [['izer', 'ize']],
  l: [
    ['bli', 'ble'],
    ['alli', 'al'],
    ['entli', 'ent'],
    ['eli', 'e'],
    ['ousli', 'ous'],
  ],
  o: [
    ['ization', 'ize'],
    ['ation', 'ate'],
    ['ator', 'ate'],
  ],
  s: [
    ['alism', 'al'],
    ['iveness', 'ive'],
    ['fulness', 'ful'],
    ['ousness', 'ous'],
  ],
  t: [
    ['aliti', 'al'],
    ['iviti', 'ive'],
    ['biliti', 'ble'],
  ],
  g: [['logi', 'log']],
};

const STEP4: Record<string, Array<[string, string]>> = {
  e: [
    ['icate', 'ic'],
    ['ative', ''],
    ['alize', 'al'],
  ],
  i: [['iciti', 'ic']],
  l: [
    ['ical', 'ic'],
    ['ful', ''],
  ],
  s: [['ness', '']],
};

const STEP5: Record<string, string[]> = {
  a: ['al'],
  c: ['ance', 'ence'],
  e: ['er'],
  i: ['ic'],
  l: ['able', 'ible'],
  n: ['ant', 'ement', 'ment', 'ent'],
  o: ['ion', 'ou'],
  s: ['ism'],
  t: ['ate', 'iti'],
  u: ['ous'],
  v: ['ive'],
  z: ['ize'],
};

/** The Porter stem of a lower-case word, as Lucene's PorterStemmer gives it. */
export function porterStem(word: string): string {
  return new Stemmer(word).stem();
}
