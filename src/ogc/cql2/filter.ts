import { invalidParameter } from '../../common/json-api/api-error.js';
import { FilterError, type Expression } from './cql2-ast.js';
import { SqlParams } from '../../database/sql-params.js';
import { compileFilter, type CompileOptions, type Queryable } from './cql2-sql.js';
import { parseCql2Json } from './cql2-json.js';
import { parseCql2Text } from './cql2-text.js';

/** The languages `filter-lang` names: CQL2 text (the default), CQL2 JSON, and `cql-text`, the pre-CQL2 name GDAL 3.6 sends. */
export type FilterLanguage = 'cql2-text' | 'cql2-json' | 'cql-text';

/** A parsed filter, and how to compile it. */
export interface ParsedFilter {
  expression: Expression;
  options: CompileOptions;
}

/**
 * Reads the `filter` parameter in its language. `cql-text` is the same grammar as `cql2-text` (GDAL 3.6
 * writes its basic subset: comparisons, LIKE, IS NULL, AND/OR/NOT), with literals read as GDAL writes
 * them (CompileOptions.lenientLiterals: quoted instants, booleans as 0 and 1). Problems are 400s
 * naming `filter`: the grammar's, and the compiler's (unknown queryables, types), found here by compiling
 * the filter once before any statement is made of it.
 */
export function readFilter(text: string, language: FilterLanguage, queryables: Readonly<Record<string, Queryable>>): ParsedFilter {
  try {
    const expression = language === 'cql2-json' ? parseCql2Json(text) : parseCql2Text(text);
    const options = { lenientLiterals: language === 'cql-text' };
    compileFilter(expression, queryables, new SqlParams(), 't', options);
    return { expression, options };
  } catch (error) {
    if (error instanceof FilterError) throw invalidParameter('filter', `filter: ${error.message}`);
    throw error;
  }
}
