// Names the service worker's bundle gets from outside its own source (publish.write_service_worker,
// esbuild --define): the site's version, the files kept for offline use, the isolation headers.
declare const SW_VERSION: string;
declare const SW_FILES: string[];
declare const SW_HEADERS: Record<string, string>;
