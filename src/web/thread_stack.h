// Gives the kernel back the stack pages a civetweb worker touched while serving a connection.
#pragma once

namespace rail::web::detail {

// Releases (MADV_DONTNEED) the calling thread's stack below the current frame, less a margin.
// civetweb runs one worker thread per held connection (up to --web.max-connections): a scrape
// leaves ~80 KiB of the stack of whichever worker served it resident, and as scrapes rotate
// through the workers, 1000 of them held ~90 MiB after a few thousand scrapes. Called when a
// connection closes, the pages below the frame are dead; the next request touches them afresh.
void ReleaseUnusedStack();

}  // namespace rail::web::detail
