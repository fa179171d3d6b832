// @ts-check
// Every page of the guide: the learner's progress beside the links to the labs (progress.js).
import { showProgress } from "./progress.js";

showProgress(document);
