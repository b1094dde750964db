/**
 * The find columns derived from the plant's definition (search-text.ts): one words column per searched field,
 * the same words the migrations' name-and-tag columns held, and, on an update, an unchanged field's words
 * kept as the row stores them (the SQLite search index must be told exactly those).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SEARCHED_PLANT_KEYS } from '../../src/domain/plant.js';
import { findColumns, findRow, FIND_ROW_COLUMNS, searchWords, WORDS_COLUMNS } from '../../src/domain/search-text.js';
import { keptWords } from '../../src/store/sqlite/search-index.js';

describe('find columns from the definition', () => {
  it('has a words column per searched field, after the name key', () => {
    assert.deepEqual(
      WORDS_COLUMNS,
      SEARCHED_PLANT_KEYS.map((key) => `${key}_words`),
    );
    assert.deepEqual(FIND_ROW_COLUMNS, ['name_key', ...WORDS_COLUMNS]);
  });

  it("folds each searched field as the name-and-tag columns did; an absent field's words are empty", () => {
    for (const plant of [
      { id: 1n, name: 'Café Ficus ﬁcus', tag: 'Shade-Loving™' },
      { id: 2n, name: 'Monstera' },
    ]) {
      const row = findRow(plant);
      assert.deepEqual(Object.keys(row), FIND_ROW_COLUMNS);
      const legacy = findColumns(plant.name, plant.tag);
      assert.deepEqual(row, { name_key: legacy.nameKey, name_words: legacy.nameWords, tag_words: legacy.tagWords });
    }
    assert.equal(findRow({ name: 'Fern', tag: null }).tag_words, '');
    assert.equal(searchWords(null), '');
  });

  it("keeps an unchanged field's stored words and takes a changed field's new ones", () => {
    // Stored words as an older folding left them: a removal from the index must name these.
    const stored = { name_words: 'old name', tag_words: 'old tag' };
    const before = { id: 1n, name: 'Fern', tag: 'shade' };
    const renamed = { id: 1n, name: 'Maidenhair fern', tag: 'shade' };
    assert.deepEqual(keptWords(stored, before, renamed, findRow(renamed)), {
      name_words: 'maidenhair fern',
      tag_words: 'old tag',
    });
    const untagged = { id: 1n, name: 'Fern' };
    assert.deepEqual(keptWords(stored, before, untagged, findRow(untagged)), { name_words: 'old name', tag_words: '' });
  });
});
