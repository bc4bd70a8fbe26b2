# bench/plot.gp - grb_bench's plots.  grb_bench runs it as
#   gnuplot -e "dir='OUT'; term='pngcairo'; ext='png'" plot.gp
# reading OUT/subbuf.dat and OUT/threads.dat (one block per series, the
# block's first line is its title) and writing OUT/ns_vs_subbuf.EXT and
# OUT/ns_vs_threads.EXT.  Error bars are the min-max over the runs.
if (!exists("dir")) dir = "."
if (!exists("term")) term = "pngcairo"
if (!exists("ext")) ext = "png"

if (term eq "svg") {
	set terminal svg size 960,600 dynamic background rgb "white"
} else {
	eval("set terminal ".term." size 960,600")
}
set termoption noenhanced
set key outside right top
set grid
set logscale x 2
set yrange [0:*]
set style data yerrorlines

stats dir."/subbuf.dat" using 2 nooutput
ns = STATS_blocks
set output dir."/ns_vs_subbuf.".ext
set title "Overwrite mode, 1 writer: ns per record vs sub-buffer size (1 MiB per CPU)"
set xlabel "sub-buffer size (KiB)"
set ylabel "ns per record (wall time)"
set xtics ("4" 4, "128" 128, "512" 512)
set xrange [2:1024]
plot for [i=0:ns-1] dir."/subbuf.dat" index i using 1:2:3:4 title columnheader(1)

stats dir."/threads.dat" using 2 nooutput
nt = STATS_blocks
set output dir."/ns_vs_threads.".ext
set title "Overwrite mode, no reader: CPU time per record vs writer threads"
set xlabel "writer threads"
set ylabel "CPU ns per record"
set xtics ("1" 1, "2" 2, "4" 4, "8" 8)
set xrange [0.8:10]
plot for [i=0:nt-1] dir."/threads.dat" index i using 1:2:3:4 title columnheader(1)
