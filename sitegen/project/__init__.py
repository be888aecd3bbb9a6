"""The course as its author wrote it: site.yaml (config), lab scripts split into cells, notebooks read
and checked (nbfile, nbsource), the fonts figures use, and the packages a lab's code imports (needs)."""
