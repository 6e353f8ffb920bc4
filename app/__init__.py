"""allocscope web application and command line (imports ``protocols``; never the reverse)."""
