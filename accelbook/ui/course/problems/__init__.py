"""The paper-and-pencil problems, one module per notebook (``nb00`` … ``nb12``): see :mod:`..hand`."""
