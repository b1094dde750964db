-- Built after the columns are filled (0007), which is faster than updating them.
-- sort=name and sort=-name in pages of any depth: an index range from the cursor on.
CREATE INDEX plants_name_key ON plants (name_key, id);
-- q: a GIN index of each plant's words; a prefix term reads the range of words it starts.
CREATE INDEX plants_search ON plants USING gin (plant_search_vector(name_words, tag_words));
