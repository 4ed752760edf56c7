"""The unit of work between planning and the forms: a :class:`~promptweave.work.task.Task` (one dataset × model),
its prompt records (built at plan time, in bounded batches at run time) and the files it writes in a work dir.
Below both ``forms/`` and ``run/``, so neither reaches up into the other for these."""
