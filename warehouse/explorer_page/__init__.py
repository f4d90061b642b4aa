"""The opening explorer as a local web page (`python -m loaders.serve`): a board, the moves played from its
position with their results, the games through it and their PGN, under the filters `explore` takes; the
position and the filters live in the URL. `view` reads a URL's query, `answers` asks the lake, `render`
writes the HTML, `server` serves it on 127.0.0.1; `assets/` holds the page's CSS and its small script."""
