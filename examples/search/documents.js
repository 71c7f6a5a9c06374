// The documents the search page starts with, and the parsing of the user's own.

/**
 * A small sample set on topics far apart, so that a query about one of them has one
 * clear best match. Each a sentence or two: every token is a row of the encoder's
 * forward pass, and the page must stay quick on the CPU path.
 */
export const SAMPLES = [
  { title: 'Bread', text: 'To bake bread, knead flour, water, salt and yeast into a dough, let it rise, then bake the loaf in a hot oven.' },
  { title: 'Volcanoes', text: 'A volcano erupts when molten rock rises through cracks in the crust and pours out as lava, ash and gas.' },
  { title: 'Photosynthesis', text: 'Plants use sunlight to turn carbon dioxide and water into sugar in their leaves, giving off oxygen.' },
  { title: 'Aqueducts', text: 'Roman aqueducts carried water to cities over long distances in channels sloping gently downhill across stone arches.' },
  { title: 'Jazz', text: 'Jazz grew up in New Orleans around 1900 from blues, ragtime and brass bands, with musicians improvising over the chords.' },
  { title: 'Marathons', text: 'Marathon training means running several times a week, with one long, slow run each weekend that grows over months.' },
  { title: 'Black holes', text: 'Near a black hole gravity is so strong that nothing, not even light, escapes once it crosses the event horizon.' },
  { title: 'Honeybees', text: 'Honeybees dance to tell each other where flowers are: the angle and length of the waggle give direction and distance.' },
  { title: 'Chess', text: 'A chess opening aims to control the centre of the board, bring out the knights and bishops, and castle the king.' },
  { title: 'Tides', text: 'The tides rise and fall twice a day because the Moon’s gravity pulls on the oceans.' },
];

/** The user's own documents: one per paragraph, paragraphs separated by a blank line; each trimmed, inner line breaks kept as spaces. */
export function parseDocuments(text) {
  return text
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
}
