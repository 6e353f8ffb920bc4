// Which layout module draws which view kind; an unknown kind falls back to the generic drawing.
import ring from "./ring.js";
import tree from "./tree.js";
import quorum from "./quorum.js";
import game from "./game.js";

const LAYOUTS = { ring, tree, quorum, game };

export function hooksFor(layout) {
  return LAYOUTS[layout] || {};
}
