// @ts-check
// Every page of the guide: the learner's progress beside the links to the labs
// (progress.js), the reader's place kept across a reload (place.js) with the
// phone's drawers closed (drawers.js), Sphinx's search marks kept off the
// pictures' hidden text (searchmarks.js), and the service worker that keeps
// the guide for offline use (offline.js).
import { showProgress } from "./progress.js";
import { keepPlace } from "./place.js";
import { closeDrawersOnLeaving } from "./drawers.js";
import { keepOffline } from "./offline.js";
import { keepSearchMarksOffPictureText } from "./searchmarks.js";

showProgress(document);
closeDrawersOnLeaving();
keepSearchMarksOffPictureText(document);
keepPlace();
keepOffline(new URL("../../", import.meta.url)); // nav.js is _static/pyodide_cells/nav.js
