// The documents the search page starts with, and the parsing of the user's own.

/**
 * A small sample set on topics far apart, so that a query about one of them has one
 * clear best match. Each a sentence or two: every token is a row of the encoder's
 * forward pass, and the page must stay quick on the CPU path.
 */
export const SAMPLES = [
  { title: 'Bread', text: 'To bake bread, knead flour, water, salt and yeast into a dough, let it rise for an hour or two, then bake the loaf in a hot oven until the crust is brown.' },
  { title: 'Volcanoes', text: 'A volcano erupts when molten rock from deep underground rises through cracks in the crust and pours out as lava, ash and gas.' },
  { title: 'Photosynthesis', text: 'Plants use sunlight to turn carbon dioxide and water into sugar in their leaves, giving off oxygen as they do.' },
  { title: 'Aqueducts', text: 'Roman engineers carried water to their cities over long distances in aqueducts, channels sloping gently downhill across stone arches.' },
  { title: 'Jazz', text: 'Jazz grew up in New Orleans early in the twentieth century, mixing blues, ragtime and brass bands, with musicians improvising over the chords.' },
  { title: 'Marathons', text: 'Training for a marathon means running several times a week and adding one long, slow run each weekend, building up the distance over months.' },
  { title: 'Black holes', text: 'A black hole is a region of space where gravity is so strong that nothing, not even light, can escape once it crosses the event horizon.' },
  { title: 'Honeybees', text: 'Honeybees tell each other where flowers are with a waggle dance whose angle and length give the direction and distance of the food.' },
  { title: 'Chess', text: 'In chess, the opening moves aim to control the centre of the board, develop the knights and bishops, and castle the king to safety.' },
  { title: 'Tides', text: 'The tides rise and fall twice a day because the Moon’s gravity pulls on the oceans, with the Sun’s pull adding spring and neap tides.' },
];

/** The user's own documents: one per paragraph, paragraphs separated by a blank line; each trimmed, inner line breaks kept as spaces. */
export function parseDocuments(text) {
  return text
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
}
