"""Real processes sharing one token file or one Redis: Python workers, and the TypeScript kit's workers beside them."""
