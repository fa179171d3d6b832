// @ts-check
// Every page of the guide: the learner's progress beside the links to the labs
// (progress.js), the reader's place kept across a reload (place.js) with the
// phone's drawers closed (drawers.js), Sphinx's search marks kept off the
// pictures' hidden text and math shown once in search excerpts (searchmarks.js), and the service worker that keeps
// the guide for offline use (offline/offline.js).
import { showProgress } from "./progress.js";
import { keepPlace } from "./place.js";
import { closeDrawersOnLeaving } from "./drawers.js";
import { keepOffline } from "../offline/offline.js";
import { keepSearchMarksOffPictureText, showMathOnceInSearchExcerpts } from "./searchmarks.js";

showProgress(document);
closeDrawersOnLeaving();
keepSearchMarksOffPictureText(document);
// The search page's `Search` (searchtools.js, a classic script that ran before this module).
if (typeof Search !== "undefined" && typeof Search?.htmlToText === "function") showMathOnceInSearchExcerpts(Search);
keepPlace();
keepOffline(new URL("../../", import.meta.url)); // nav.js is _static/pyodide_cells/nav.js
