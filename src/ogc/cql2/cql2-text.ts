import { bboxGeometry, readGeoJsonGeometry } from './geometry.js';
import {
  FilterError,
  MAX_DEPTH,
  SPATIAL_FUNCTIONS,
  type ComparisonOperator,
  type Expression,
  type GeoJsonGeometry,
  type Operand,
  type SpatialFunction,
} from './cql2-ast.js';

/**
 * A recursive-descent parser of CQL2 text (OGC 21-065, Annex B, the BNF of cql2-text), for the
 * conformance classes this service implements: Basic CQL2, Advanced Comparison Operators (LIKE,
 * BETWEEN, IN), Case-insensitive Comparison (CASEI), Basic Spatial Functions (with all geometry
 * types: "plus") and Spatial Functions (S_INTERSECTS, S_EQUALS, S_DISJOINT, S_TOUCHES, S_WITHIN,
 * S_OVERLAPS, S_CROSSES, S_CONTAINS over WKT and BBOX literals), and the S_DWITHIN extension.
 * Each production of the BNF this subset keeps is a method below, named after it.
 *
 * Two liberties, both documented: queryable names are the twin list form's, which are dasherized
 * (`place-id`), so an identifier may contain `-` (CQL2's arithmetic, where `a-b` would be a subtraction,
 * is not offered); and a double-quoted identifier may hold any character but `"`. Keywords are
 * case-insensitive, identifiers are not.
 */

type TokenKind = 'identifier' | 'quoted' | 'string' | 'number' | 'symbol' | 'end';
interface Token {
  kind: TokenKind;
  text: string;
  /** Character offset in the filter (0-based). */
  at: number;
}

const SYMBOLS = ['<>', '<=', '>=', '(', ')', ',', '=', '<', '>'];
const IDENTIFIER_START = /[\p{L}_:]/u;
const IDENTIFIER_PART = /[\p{L}\p{M}\p{N}_:.\-\u203F\u2040]/u;
const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/;

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const at = i;
    if (c === "'") {
      // characterLiteral: '' (and \') is an escaped quote.
      let value = '';
      i++;
      for (;;) {
        if (i >= text.length) throw new FilterError(`Syntax error at character ${at + 1}: the string that starts there is not closed with '.`);
        if (text[i] === "'" && text[i + 1] === "'") {
          value += "'";
          i += 2;
        } else if (text[i] === '\\' && text[i + 1] === "'") {
          value += "'";
          i += 2;
        } else if (text[i] === "'") {
          i++;
          break;
        } else value += text[i++];
      }
      tokens.push({ kind: 'string', text: value, at });
      continue;
    }
    if (c === '"') {
      const end = text.indexOf('"', i + 1);
      if (end < 0) throw new FilterError(`Syntax error at character ${at + 1}: the quoted name that starts there is not closed with ".`);
      const name = text.slice(i + 1, end);
      if (name.length === 0) throw new FilterError(`Syntax error at character ${at + 1}: an empty quoted name.`);
      tokens.push({ kind: 'quoted', text: name, at });
      i = end + 1;
      continue;
    }
    const number = /[\d.+-]/.test(c) ? NUMBER.exec(text.slice(i)) : null;
    if (number && !(c === '.' && !/\d/.test(text[i + 1] ?? ''))) {
      tokens.push({ kind: 'number', text: number[0], at });
      i += number[0].length;
      continue;
    }
    if (IDENTIFIER_START.test(c)) {
      let end = i + 1;
      while (end < text.length && IDENTIFIER_PART.test(text[end])) end++;
      tokens.push({ kind: 'identifier', text: text.slice(i, end), at });
      i = end;
      continue;
    }
    const symbol = SYMBOLS.find((s) => text.startsWith(s, i));
    if (!symbol) throw new FilterError(`Syntax error at character ${at + 1}: unexpected ${JSON.stringify(c)}.`);
    tokens.push({ kind: 'symbol', text: symbol, at });
    i += symbol.length;
  }
  tokens.push({ kind: 'end', text: '', at: text.length });
  return tokens;
}

const COMPARISON: ReadonlySet<string> = new Set(['=', '<>', '<', '>', '<=', '>=']);
/** Words that are never a property name unless quoted. */
const RESERVED = new Set(['AND', 'OR', 'NOT', 'LIKE', 'BETWEEN', 'IN', 'IS', 'NULL', 'TRUE', 'FALSE']);
const WKT_TYPES: Record<string, GeoJsonGeometry['type']> = {
  POINT: 'Point',
  LINESTRING: 'LineString',
  POLYGON: 'Polygon',
  MULTIPOINT: 'MultiPoint',
  MULTILINESTRING: 'MultiLineString',
  MULTIPOLYGON: 'MultiPolygon',
  GEOMETRYCOLLECTION: 'GeometryCollection',
};
const SPATIAL: ReadonlySet<string> = new Set(SPATIAL_FUNCTIONS);

class Parser {
  private index = 0;
  private depth = 0;

  constructor(
    private readonly tokens: Token[],
    private readonly source: string,
  ) {}

  private get token(): Token {
    return this.tokens[this.index];
  }

  private next(): Token {
    const token = this.tokens[this.index];
    if (token.kind !== 'end') this.index++;
    return token;
  }

  /** The current token is the keyword `word` (case-insensitive, unquoted). */
  private isKeyword(word: string, offset = 0): boolean {
    const token = this.tokens[this.index + offset];
    return token !== undefined && token.kind === 'identifier' && token.text.toUpperCase() === word;
  }

  private isSymbol(symbol: string, offset = 0): boolean {
    const token = this.tokens[this.index + offset];
    return token !== undefined && token.kind === 'symbol' && token.text === symbol;
  }

  private acceptKeyword(word: string): boolean {
    if (!this.isKeyword(word)) return false;
    this.index++;
    return true;
  }

  private fail(expected: string): never {
    const token = this.token;
    const found = token.kind === 'end' ? 'the end of the filter' : `${JSON.stringify(this.source.slice(token.at, token.at + 24))}`;
    throw new FilterError(`Syntax error at character ${token.at + 1}: expected ${expected}, found ${found}.`);
  }

  private expectSymbol(symbol: string, expected = `"${symbol}"`): void {
    if (!this.isSymbol(symbol)) this.fail(expected);
    this.index++;
  }

  private expectKeyword(word: string): void {
    if (!this.acceptKeyword(word)) this.fail(word);
  }

  private nested<T>(parse: () => T): T {
    if (++this.depth > MAX_DEPTH) throw new FilterError(`The filter nests deeper than ${MAX_DEPTH} levels.`);
    try {
      return parse();
    } finally {
      this.depth--;
    }
  }

  /** The whole filter: one booleanExpression, then the end. */
  parse(): Expression {
    const expression = this.booleanExpression();
    if (this.token.kind !== 'end') this.fail('AND, OR or the end of the filter');
    return expression;
  }

  /** booleanExpression = booleanTerm {"OR" booleanTerm} */
  private booleanExpression(): Expression {
    return this.nested(() => {
      const args = [this.booleanTerm()];
      while (this.acceptKeyword('OR')) args.push(this.booleanTerm());
      return args.length === 1 ? args[0] : { kind: 'or', args };
    });
  }

  /** booleanTerm = booleanFactor {"AND" booleanFactor} */
  private booleanTerm(): Expression {
    const args = [this.booleanFactor()];
    while (this.acceptKeyword('AND')) args.push(this.booleanFactor());
    return args.length === 1 ? args[0] : { kind: 'and', args };
  }

  /** booleanFactor = ["NOT"] booleanPrimary */
  private booleanFactor(): Expression {
    if (this.acceptKeyword('NOT')) return this.nested(() => ({ kind: 'not', arg: this.booleanFactor() }));
    return this.booleanPrimary();
  }

  /** booleanPrimary = predicate | booleanLiteral | "(" booleanExpression ")" */
  private booleanPrimary(): Expression {
    if (this.isSymbol('(')) {
      this.index++;
      const inner = this.booleanExpression();
      this.expectSymbol(')', '")" closing the parenthesis');
      return inner;
    }
    const name = this.token.kind === 'identifier' ? this.token.text.toUpperCase() : '';
    if (SPATIAL.has(name) && this.isSymbol('(', 1)) return this.spatialPredicate(name as SpatialFunction);
    if (name === 'S_DWITHIN' && this.isSymbol('(', 1)) return this.distancePredicate();
    const left = this.scalarOperand();
    return this.comparisonPredicate(left);
  }

  /** spatialPredicate = spatialFunction "(" geomExpression "," geomExpression ")" */
  private spatialPredicate(fn: SpatialFunction): Expression {
    this.index += 2;
    const left = this.geomExpression();
    this.expectSymbol(',');
    const right = this.geomExpression();
    this.expectSymbol(')', `")" closing ${fn}`);
    return { kind: 'spatial', fn, left, right };
  }

  /** S_DWITHIN "(" geomExpression "," geomExpression "," numericLiteral ")": metres on the sphere. */
  private distancePredicate(): Expression {
    this.index += 2;
    const left = this.geomExpression();
    this.expectSymbol(',');
    const right = this.geomExpression();
    this.expectSymbol(',');
    const distance = this.scalarOperand();
    this.expectSymbol(')', '")" closing S_DWITHIN');
    return { kind: 'dwithin', left, right, distance };
  }

  /** geomExpression = spatialInstance | propertyName */
  private geomExpression(): Operand {
    return this.scalarOperand();
  }

  /**
   * comparisonPredicate = binaryComparisonPredicate | isLikePredicate | isBetweenPredicate |
   * isInListPredicate | isNullPredicate; a lone boolean literal is a booleanLiteral.
   */
  private comparisonPredicate(left: Operand): Expression {
    const token = this.token;
    if (token.kind === 'symbol' && COMPARISON.has(token.text)) {
      this.index++;
      return { kind: 'compare', op: token.text as ComparisonOperator, left, right: this.scalarOperand() };
    }
    if (this.acceptKeyword('IS')) {
      const negated = this.acceptKeyword('NOT');
      this.expectKeyword('NULL');
      return { kind: 'isNull', negated, value: left };
    }
    const negated = this.isKeyword('NOT') && (this.isKeyword('LIKE', 1) || this.isKeyword('BETWEEN', 1) || this.isKeyword('IN', 1));
    if (negated) this.index++;
    if (this.acceptKeyword('LIKE')) return { kind: 'like', negated, value: left, pattern: this.scalarOperand() };
    if (this.acceptKeyword('BETWEEN')) {
      const low = this.scalarOperand();
      this.expectKeyword('AND');
      return { kind: 'between', negated, value: left, low, high: this.scalarOperand() };
    }
    if (this.acceptKeyword('IN')) {
      this.expectSymbol('(', '"(" starting the IN list');
      const list = [this.scalarOperand()];
      while (this.isSymbol(',')) {
        this.index++;
        list.push(this.scalarOperand());
      }
      this.expectSymbol(')', '"," or ")" closing the IN list');
      return { kind: 'in', negated, value: left, list };
    }
    if (left.kind === 'boolean') return { kind: 'literal', value: left.value };
    return this.fail('a comparison operator (=, <>, <, >, <=, >=), LIKE, BETWEEN, IN or IS NULL');
  }

  /**
   * An operand: characterLiteral | numericLiteral | booleanLiteral | instantLiteral | spatialInstance |
   * propertyName | CASEI "(" … ")". A name followed by "(" that is none of these is a function, which
   * this service does not offer.
   */
  private scalarOperand(): Operand {
    return this.nested(() => {
      const token = this.token;
      switch (token.kind) {
        case 'string':
          this.index++;
          return { kind: 'string', value: token.text };
        case 'number':
          this.index++;
          return { kind: 'number', value: Number(token.text) };
        case 'quoted':
          this.index++;
          return { kind: 'property', name: token.text };
        case 'identifier':
          return this.namedOperand(token);
        default:
          return this.fail('a property name or a literal');
      }
    });
  }

  private namedOperand(token: Token): Operand {
    const word = token.text.toUpperCase();
    if (word === 'TRUE' || word === 'FALSE') {
      this.index++;
      return { kind: 'boolean', value: word === 'TRUE' };
    }
    const call = this.isSymbol('(', 1);
    if ((word === 'TIMESTAMP' || word === 'DATE') && call) {
      this.index += 2;
      const value = this.next();
      if (value.kind !== 'string') {
        this.index--;
        this.fail(`a quoted ${word === 'DATE' ? 'date' : 'timestamp'} in ${word}(…)`);
      }
      this.expectSymbol(')', `")" closing ${word}`);
      return { kind: word === 'DATE' ? 'date' : 'timestamp', value: value.text };
    }
    if (word === 'CASEI' && call) {
      this.index += 2;
      const operand = this.scalarOperand();
      this.expectSymbol(')', '")" closing CASEI');
      return { kind: 'casei', operand };
    }
    if (word === 'BBOX' && call) return { kind: 'geometry', value: this.bbox() };
    if (Object.hasOwn(WKT_TYPES, word) && (call || this.isKeyword('Z', 1))) return { kind: 'geometry', value: this.geometryLiteral() };
    if (call) throw new FilterError(`Unknown function ${token.text}() at character ${token.at + 1}: this service offers no functions (spatial predicates, CASEI, TIMESTAMP, DATE and BBOX are the callable words).`);
    if (RESERVED.has(word)) this.fail('a property name or a literal (quote a property named like a keyword: "…")');
    this.index++;
    return { kind: 'property', name: token.text };
  }

  /** bboxTaggedText = "BBOX" "(" westBoundLon "," southBoundLat "," eastBoundLon "," northBoundLat ")" (or with minz/maxz) */
  private bbox(): GeoJsonGeometry {
    this.index += 2;
    const numbers = [this.numberToken('a number in BBOX(…)')];
    while (this.isSymbol(',')) {
      this.index++;
      numbers.push(this.numberToken('a number in BBOX(…)'));
    }
    this.expectSymbol(')', '"," or ")" closing BBOX');
    return bboxGeometry(numbers);
  }

  private numberToken(expected: string): number {
    const token = this.token;
    if (token.kind !== 'number') this.fail(expected);
    this.index++;
    return Number(token.text);
  }

  /** <geometry type> ["Z"] <its text>, as in OGC 06-103 (Simple Features WKT) and the CQL2 BNF. */
  private geometryLiteral(): GeoJsonGeometry {
    const type = WKT_TYPES[this.next().text.toUpperCase()];
    this.acceptKeyword('Z');
    return this.nested(() => {
      if (type === 'GeometryCollection') {
        this.expectSymbol('(', '"(" starting the collection');
        const geometries = [this.collectionMember()];
        while (this.isSymbol(',')) {
          this.index++;
          geometries.push(this.collectionMember());
        }
        this.expectSymbol(')', '"," or ")" closing the collection');
        return readGeoJsonGeometry({ type, geometries });
      }
      return readGeoJsonGeometry({ type, coordinates: this.coordinatesOf(type) });
    });
  }

  private collectionMember(): GeoJsonGeometry {
    const token = this.token;
    if (token.kind !== 'identifier' || !Object.hasOwn(WKT_TYPES, token.text.toUpperCase())) this.fail('a geometry (POINT, LINESTRING, POLYGON, …)');
    return this.geometryLiteral();
  }

  private coordinatesOf(type: Exclude<GeoJsonGeometry['type'], 'GeometryCollection'>): unknown {
    switch (type) {
      case 'Point':
        return this.parenthesised(() => this.position());
      case 'LineString':
        return this.positionList();
      case 'Polygon':
        return this.parenthesised(() => this.list(() => this.positionList()));
      // MULTIPOINT ((1 2), (3 4)) or MULTIPOINT (1 2, 3 4)
      case 'MultiPoint':
        return this.parenthesised(() => this.list(() => (this.isSymbol('(') ? this.parenthesised(() => this.position()) : this.position())));
      case 'MultiLineString':
        return this.parenthesised(() => this.list(() => this.positionList()));
      case 'MultiPolygon':
        return this.parenthesised(() => this.list(() => this.parenthesised(() => this.list(() => this.positionList()))));
    }
  }

  private parenthesised<T>(inner: () => T): T {
    this.expectSymbol('(');
    const value = inner();
    this.expectSymbol(')');
    return value;
  }

  private list<T>(item: () => T): T[] {
    const items = [item()];
    while (this.isSymbol(',')) {
      this.index++;
      items.push(item());
    }
    return items;
  }

  /** "(" position {"," position} ")" */
  private positionList(): number[][] {
    return this.parenthesised(() => this.list(() => this.position()));
  }

  /** x y [z] */
  private position(): number[] {
    const coordinates = [this.numberToken('a coordinate'), this.numberToken('a second coordinate')];
    if (this.token.kind === 'number') coordinates.push(this.numberToken('a coordinate'));
    return coordinates;
  }
}

/** Parses a cql2-text filter; a FilterError names what is wrong and where. */
export function parseCql2Text(text: string): Expression {
  return new Parser(tokenize(text), text).parse();
}
